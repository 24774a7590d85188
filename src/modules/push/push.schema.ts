/** Schemas of spec "Push registration" (GET/POST /api/push). */
import { type Static, Type } from 'typebox';
import { envelope } from '../../platform/schema.js';

/**
 * Device tokens as the services issue them: FCM registration tokens (letters, digits, `_`, `-`,
 * `:`, about 160 characters today) and APNs device tokens (hexadecimal, 64 digits today; Apple
 * says not to rely on the length). Bounded so a user's registrations stay small.
 */
export const FCM_TOKEN = /^[A-Za-z0-9_:.-]{1,1000}$/u;
export const APNS_TOKEN = /^[0-9a-fA-F]{64,200}$/u;

export const PushBody = Type.Object({
  system: Type.Enum(['fcm', 'apns'], { description: 'fcm: the Android service; apns: the iOS service' }),
  action: Type.Enum(['add', 'delete']),
  device_token: Type.String({
    minLength: 1,
    maxLength: 1000,
    description:
      'fcm: the FCM registration token (letters, digits, _ - : ., at most 1000); apns: the APNs device token ' +
      '(64 to 200 hex digits, stored in lower case). A token belongs to one user: adding it moves it from ' +
      "whoever had it. Deleting a token that is not one of the caller's is ok and changes nothing.",
  }),
  application_id: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        'apns add only (missing-element without it): ^[a-zA-Z0-9]{10}.[a-zA-Z0-9.-]{5,100}$ (invalid-appid); ' +
        'must be registered by the operator (unknown-appid)',
    }),
  ),
  sandbox: Type.Optional(Type.Boolean({ description: 'apns add only: the sandbox host (default false)' })),
  apns_topic: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        'apns add only: ^[a-zA-Z0-9.-]{5,100}$ (invalid-apns-topic); default: the bundle-id part of application_id',
    }),
  ),
});
export type PushBody = Static<typeof PushBody>;

export const ApnsRegistration = Type.Object({
  application_id: Type.String(),
  sandbox: Type.Boolean(),
  apns_topic: Type.Optional(Type.String({ description: 'only when given at registration' })),
});
export type ApnsRegistration = Static<typeof ApnsRegistration>;

export const PushAnswer = envelope({
  fcm: Type.Object({ device_tokens: Type.Array(Type.String()) }),
  apns: Type.Object({
    device_tokens: Type.Record(Type.String(), ApnsRegistration, {
      description: 'device token -> registration',
    }),
  }),
});
export type PushRegistrations = Omit<Static<typeof PushAnswer>, 'status' | 'message'>;
