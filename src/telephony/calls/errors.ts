/**
 * The call engine's own errors (STYLE.md: the engine raises its own errors and the HTTP area
 * translates them): a code the API areas map to the spec's statuses, never an ApiError.
 */
export type CallErrorCode =
  /** The call engine does not run (TELEPHONY off, Kamailio or rtpengine missing, stopped). */
  | 'not-running'
  /** The command does not fit the call's state (ended, no media at Zentrale, no dialog yet). */
  | 'illegal-state'
  /** The peer refused the request (a re-INVITE or REFER answered 4xx-6xx, a transfer that failed). */
  | 'fail';

export class CallError extends Error {
  constructor(
    readonly code: CallErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CallError';
  }
}
