/**
 * Errors (spec section "Errors"): every failure is thrown once as an ApiError carrying the
 * spec's status string; the envelope plugin turns it into `{status, message}`.
 */

/** Generic statuses possible on any call. */
export type GenericStatus =
  | 'no-session'
  | 'no-auth'
  | 'wrong-origin'
  | 'wrong-syntax'
  | 'missing-element'
  | 'fail';

export class ApiError extends Error {
  readonly status: string;
  constructor(status: GenericStatus | (string & {}), message?: string) {
    super(message ?? status);
    this.status = status;
    this.name = 'ApiError';
  }
}

/** Thrown by binary download routes: answered with HTTP 404 and an empty body. */
export class NotFoundError extends Error {
  constructor() {
    super('not found');
    this.name = 'NotFoundError';
  }
}
