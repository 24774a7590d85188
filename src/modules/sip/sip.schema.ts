/** Schemas of spec "SIP accounts": /api/sip, /api/sip/{sip-user}, its notify and blf. */
import { type Static, Type } from 'typebox';
import { Password, Phone, SipUser } from '../../platform/formats.js';
import { named } from '../../platform/openapi/components.js';
import { envelope } from '../../platform/schema.js';
import { BLF_LIMIT } from './sip.service.js';

const SipDescription = Type.String({ pattern: '^.{0,100}$' });
const Domain = Type.String({ maxLength: 253, description: 'one of the two SIP domains' });

export const CreateSipBody = Type.Object({
  password: Password,
  description: Type.Optional(SipDescription),
  domain: Type.Optional(Domain),
});
export type CreateSipBody = Static<typeof CreateSipBody>;

export const CreateSipAnswer = envelope({
  user: SipUser,
  domain: Type.String(),
});

export const SipAccountObject = named(
  'SipAccount',
  Type.Object({
    domain: Type.String(),
    password: Type.String(),
    description: Type.String(),
    contact: Type.Optional(
      Type.String({ description: 'IP:port of the current registration, only if registered' }),
    ),
    expire: Type.Optional(
      Type.Integer({ description: 'seconds since epoch when the registration ends, only if registered' }),
    ),
  }),
);

export const ListSipAnswer = envelope({
  sip: Type.Record(Type.String(), SipAccountObject, {
    description: "the user's SIP accounts by SIP user name",
  }),
});

/** Any name: one that is not an own account (whatever its form) is wrong-sip. */
export const SipParams = Type.Object({ user: Type.String({ maxLength: 64, description: 'SIPUSER' }) });
export type SipParams = Static<typeof SipParams>;

export const UpdateSipBody = Type.Object({
  password: Type.Optional(Password),
  description: Type.Optional(SipDescription),
  domain: Type.Optional(Domain),
});
export type UpdateSipBody = Static<typeof UpdateSipBody>;

export const NotifyBody = Type.Object({
  'event-string': Type.Optional(Type.String({ pattern: '^.{0,200}$', description: 'Event header' })),
  'content-type': Type.Optional(Type.String({ pattern: '^.{0,200}$', description: 'Content-Type header' })),
  content: Type.Optional(Type.String({ pattern: '^.{0,2500}$', description: 'body' })),
});
export type NotifyBody = Static<typeof NotifyBody>;

const PhoneList = Type.Array(Phone, { maxItems: BLF_LIMIT });

export const BlfAnswer = envelope({
  subscriptions: Type.Array(Type.String(), { description: 'numbers whose line state the account watches' }),
});

export const UpdateBlfBody = Type.Object({
  subscribe: Type.Optional(PhoneList),
  unsubscribe: Type.Optional(PhoneList),
});
export type UpdateBlfBody = Static<typeof UpdateBlfBody>;
