/**
 * The conference engine's own errors (STYLE.md: the engine raises its own errors and the HTTP
 * area translates them, e.g. to conference-offline or wrong-syntax): never an ApiError.
 */
export type ConferenceErrorCode =
  /** The room takes no new members (locked by a moderator). */
  | 'locked'
  /** The room has its maximum of members. */
  | 'full'
  /** The call cannot join: not answered by Zentrale, ended, or the media worker is gone. */
  | 'illegal-state'
  /** No such member (never joined, or left). */
  | 'no-member'
  /** A volume outside −4..4. */
  | 'wrong-volume';

export class ConferenceError extends Error {
  constructor(
    readonly code: ConferenceErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ConferenceError';
  }
}
