/**
 * Errors (spec section "Errors"): every failure is thrown once as an ApiError carrying one of
 * the spec's statuses; the envelope plugin turns it into `{status, message}`. The statuses are
 * a closed union, so a misspelt status fails the typecheck.
 */

/** Generic statuses possible on any call. */
export type GenericStatus =
  | 'no-session'
  | 'no-auth'
  | 'wrong-origin'
  | 'wrong-syntax'
  | 'missing-element'
  | 'fail';

/** wrong-{resource}: the UUID or name is unknown or not accessible (Errors, each endpoint). */
export type WrongResourceStatus =
  | 'wrong-announcement'
  | 'wrong-box'
  | 'wrong-chat'
  | 'wrong-comment'
  | 'wrong-contact'
  | 'wrong-dialplan'
  | 'wrong-domain'
  | 'wrong-fax'
  | 'wrong-ipquality'
  | 'wrong-ivr'
  | 'wrong-job'
  | 'wrong-object'
  | 'wrong-phone'
  | 'wrong-presentation'
  | 'wrong-recording'
  | 'wrong-rule'
  | 'wrong-sensor'
  | 'wrong-sip'
  | 'wrong-state'
  | 'wrong-task'
  | 'wrong-user'
  | 'wrong-usergroup';

/** The other call-specific statuses the spec names (Errors and the endpoints). */
export type CallStatus =
  | 'access-denied'
  | 'too-large'
  | 'malformed-file'
  | 'quota-exceeded'
  | 'illegal-state'
  | 'unknown-verification'
  | 'already-exist'
  | 'already-auth'
  | 'exceeded-limit'
  | 'empty-data'
  | 'empty-filter'
  | 'not-empty'
  | 'already-grouped'
  | 'phone-duplicate'
  | 'phone-forbidden'
  // Session and sign-up
  | 'wrong-credentials'
  | 'wrong-session'
  | 'resource-throttle'
  | 'wrong-captcha'
  | 'email-failure'
  | 'wrong-code'
  | 'wrong-username'
  | 'duplicate-username'
  // User
  | 'wrong-password'
  // Fax send
  | 'locked-phone'
  | 'no-content'
  | 'forbidden-to'
  // SIP accounts, dialplan, rules, conferences
  | 'not-registered'
  | 'no-via'
  | 'no-callreverse'
  | 'deactivated-rule'
  | 'conference-offline'
  // Device API
  | 'wrong-auth'
  // Push registration
  | 'unknown-appid'
  | 'invalid-appid'
  | 'invalid-apns-topic';

/** Statuses of Zentrale's own, for things the spec lists without a described shape. */
export type ZentraleStatus =
  // a tag UUID unknown or not readable (tags: "Other resources", no statuses given)
  | 'wrong-tag'
  // an invitation id unknown or its owner disabled (invitations: listed without a shape)
  | 'wrong-invitation'
  // a chat message unknown in its chat (chat messages: listed without a shape)
  | 'wrong-message'
  // an xobject UUID unknown or not accessible (xobject: listed without a shape)
  | 'wrong-xobject'
  // operator data, named by the CLI and the operator services: a feature pack, a device, a
  // partner, an internal permission that does not exist
  | 'wrong-pack'
  | 'wrong-device'
  | 'wrong-partner'
  | 'wrong-permission';

export type ApiStatus = GenericStatus | WrongResourceStatus | CallStatus | ZentraleStatus;

export class ApiError extends Error {
  readonly status: ApiStatus;
  constructor(status: ApiStatus, message?: string) {
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
