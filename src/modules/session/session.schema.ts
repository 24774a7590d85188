/** Schemas of spec "Session and sign-up": the session object and GET/POST/DELETE /api/session. */
import { type Static, Type } from 'typebox';
import { missingLogin, present } from '../../platform/alternatives.js';
import { Email, Key, Language, PartnerName, Password, Username, Uuid } from '../../platform/formats.js';
import { named } from '../../platform/openapi/components.js';
import { envelope } from '../../platform/schema.js';

export const SessionFields = {
  sid: Type.String({ description: 'session id' }),
  did: Type.String({ description: 'download id of the session' }),
  server: Type.String({ description: 'address of the server that owns the session' }),
  partner: Type.Optional(Type.String({ description: 'only if the authenticated user belongs to a partner' })),
  auth: Type.Boolean(),
  next_event: Type.Integer({ description: 'id of the next not-yet-received event' }),
};

export const SessionObject = named('Session', Type.Object(SessionFields));
export type SessionObject = Static<typeof SessionObject>;

export const GetSessionQuery = Type.Object({
  language: Type.Optional(Language),
  sid: Type.Optional(Type.String()),
});

export const GetSessionAnswer = envelope(SessionFields);

export const PostSessionBody = Type.Object({
  username: Type.Optional(Username),
  email: Type.Optional(Email),
  password: Type.Optional(Password),
  partner: Type.Optional(PartnerName),
  key: Type.Optional(Key),
  user: Type.Optional(Uuid),
});
export type PostSessionBody = Static<typeof PostSessionBody>;

/** Which of the three login bodies was sent, and its first missing element. */
export function missingCredential(body: Record<string, unknown>): string | undefined {
  if (present(body, 'partner') || present(body, 'key')) {
    if (!present(body, 'partner')) return 'partner';
    return present(body, 'key') ? undefined : 'key';
  }
  return missingLogin(body) ?? (present(body, 'password') ? undefined : 'password');
}

/** With a session: `partner` or nothing; without one: the full session object. */
export const PostSessionAnswer = envelope({
  sid: Type.Optional(SessionFields.sid),
  did: Type.Optional(SessionFields.did),
  server: Type.Optional(SessionFields.server),
  partner: SessionFields.partner,
  auth: Type.Optional(SessionFields.auth),
  next_event: Type.Optional(SessionFields.next_event),
});
