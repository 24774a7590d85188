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
  | 'wrong-permission'
  // a task for a box that holds no device session (boxes: listed without a shape)
  | 'box-offline'
  // a volume, or a file or folder in it, unknown or not accessible (volumes: listed without a shape)
  | 'wrong-volume'
  // a webhook subscription unknown or not the caller's (decisions.md "Event transports")
  | 'wrong-webhook'
  | 'wrong-file'
  // a call unknown or not the user's (the /api/call family: listed without a shape)
  | 'wrong-call';

export type ApiStatus = GenericStatus | WrongResourceStatus | CallStatus | ZentraleStatus;

/**
 * Every status of the closed union at run time (tests and the fuzz check answers against it);
 * a Record over ApiStatus, so a status added to the union without being listed here, or listed
 * here without being in the union, fails the typecheck.
 */
const STATUS_TABLE: Record<ApiStatus, true> = {
  'no-session': true,
  'no-auth': true,
  'wrong-origin': true,
  'wrong-syntax': true,
  'missing-element': true,
  fail: true,
  'wrong-announcement': true,
  'wrong-box': true,
  'wrong-chat': true,
  'wrong-comment': true,
  'wrong-contact': true,
  'wrong-dialplan': true,
  'wrong-domain': true,
  'wrong-fax': true,
  'wrong-ipquality': true,
  'wrong-ivr': true,
  'wrong-job': true,
  'wrong-object': true,
  'wrong-phone': true,
  'wrong-presentation': true,
  'wrong-recording': true,
  'wrong-rule': true,
  'wrong-sensor': true,
  'wrong-sip': true,
  'wrong-state': true,
  'wrong-task': true,
  'wrong-user': true,
  'wrong-usergroup': true,
  'wrong-call': true,
  'access-denied': true,
  'too-large': true,
  'malformed-file': true,
  'quota-exceeded': true,
  'illegal-state': true,
  'unknown-verification': true,
  'already-exist': true,
  'already-auth': true,
  'exceeded-limit': true,
  'empty-data': true,
  'empty-filter': true,
  'not-empty': true,
  'already-grouped': true,
  'phone-duplicate': true,
  'phone-forbidden': true,
  'wrong-credentials': true,
  'wrong-session': true,
  'resource-throttle': true,
  'wrong-captcha': true,
  'email-failure': true,
  'wrong-code': true,
  'wrong-username': true,
  'duplicate-username': true,
  'wrong-password': true,
  'locked-phone': true,
  'no-content': true,
  'forbidden-to': true,
  'not-registered': true,
  'no-via': true,
  'no-callreverse': true,
  'deactivated-rule': true,
  'conference-offline': true,
  'wrong-auth': true,
  'unknown-appid': true,
  'invalid-appid': true,
  'invalid-apns-topic': true,
  'wrong-tag': true,
  'wrong-invitation': true,
  'wrong-message': true,
  'wrong-xobject': true,
  'wrong-pack': true,
  'wrong-device': true,
  'wrong-partner': true,
  'wrong-permission': true,
  'box-offline': true,
  'wrong-volume': true,
  'wrong-webhook': true,
  'wrong-file': true,
};

/** Whether `value` is one of the spec statuses (not `ok`). */
export function isApiStatus(value: unknown): value is ApiStatus {
  return typeof value === 'string' && Object.hasOwn(STATUS_TABLE, value);
}

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
