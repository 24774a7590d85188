/**
 * Schemas of GET/POST /api/phone (spec "Listed without a described shape"; the settings are the
 * Partner API's phone settings plus what the user chooses) and POST /api/phone/{number}/simulate
 * (Zentrale extension).
 */
import { type Static, Type } from 'typebox';
import { Email, Phone, Uuid } from '../../platform/formats.js';
import { UUID_PATTERN } from '../../platform/object-store/index.js';
import { envelope } from '../../platform/schema.js';
import { DialplanSimulation, LegacyDecisionView } from '../dialplan/index.js';
import { IvrSimulation } from '../ivr/index.js';

const UuidOrEmpty = Type.String({
  pattern: `^(?:${UUID_PATTERN.slice(1, -1)})?$`,
  description: 'UUID; "" clears it',
});

export const NumberSettingsView = Type.Object({
  dialplan_enable: Type.Boolean({ description: 'partner switch (default false)' }),
  call_enable: Type.Boolean({ description: 'partner switch (default false)' }),
  recording_enable: Type.Boolean({ description: 'partner switch (default true)' }),
  fax_enable: Type.Boolean({ description: 'partner switch (default true)' }),
  conference_enable: Type.Boolean({ description: 'partner switch (default true)' }),
  play_announcement_only: Type.Boolean({ description: 'partner switch (default false)' }),
  p_asserted_identity: Type.Optional(Phone),
  locked: Type.Boolean({ description: 'set by the operator until the number is released' }),
  answer: Type.Enum(['dialplan', 'ivr', 'legacy', 'disabled'], {
    description:
      'what answers a call: the v2 dialplan, the IVR, the legacy dialplan (neither set), or nothing (dialplan_enable unset)',
  }),
  dialplan: Type.Optional(Uuid),
  ivr: Type.Optional(Uuid),
  announcement: Type.Optional(Uuid),
  on_hold_music: Type.Optional(Uuid),
  notification_email: Type.Optional(Email),
  notification_attachment: Type.Boolean({ description: 'default false' }),
});
export type NumberSettingsView = Static<typeof NumberSettingsView>;

export const ListPhoneAnswer = envelope({
  phone: Type.Record(Type.String(), NumberSettingsView, {
    description: "the caller's numbers, keyed by number",
  }),
});

export const NumberChange = Type.Object({
  dialplan: Type.Optional({ ...UuidOrEmpty, description: 'UUID of an own v2 dialplan; "" clears it' }),
  ivr: Type.Optional({ ...UuidOrEmpty, description: 'UUID of an own IVR; "" clears it' }),
  announcement: Type.Optional({
    ...UuidOrEmpty,
    description: 'UUID of a readable announcement; "" clears it',
  }),
  on_hold_music: Type.Optional({
    ...UuidOrEmpty,
    description: 'UUID of a readable announcement; "" clears it',
  }),
  notification_email: Type.Optional(
    Type.Union([Email, Type.Literal('')], { description: 'e-mail; "" clears it' }),
  ),
  notification_attachment: Type.Optional(Type.Boolean()),
});
export type NumberChange = Static<typeof NumberChange>;

export const ConfigurePhoneBody = Type.Object({
  phone: Type.Record(Type.String({ pattern: '^\\+[0-9]{3,20}$' }), NumberChange, {
    additionalProperties: false,
    maxProperties: 1000,
    description: 'number -> the settings to change',
  }),
});
export type ConfigurePhoneBody = Static<typeof ConfigurePhoneBody>;

export const PhoneParams = Type.Object({ number: Phone });

export const PhoneSimulateBody = Type.Object({
  caller: Type.String({
    pattern: '^.{1,64}$',
    description: 'caller id; `anonymous` for a call with CLIR',
  }),
  time: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 253402300799, description: 'seconds since epoch; default now' }),
  ),
  events: Type.Optional(
    Type.Array(Type.Enum(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '#', 'timeout']), {
      maxItems: 100,
      description: 'DTMF symbols and timeouts, for an IVR',
    }),
  ),
  situation: Type.Optional(
    Type.Enum(['call', 'timeout', 'unavailable', 'busy'], {
      description: 'for the legacy dialplan: which path (default call)',
    }),
  ),
});
export type PhoneSimulateBody = Static<typeof PhoneSimulateBody>;

export const PhoneSimulateAnswer = envelope({
  answer: NumberSettingsView.properties.answer,
  dialplan: Type.Optional({ ...Uuid, description: 'the v2 dialplan that answers' }),
  ivr: Type.Optional({ ...Uuid, description: 'the IVR that answers' }),
  decision: Type.Optional(DialplanSimulation),
  walk: Type.Optional(IvrSimulation),
  legacy: Type.Optional(LegacyDecisionView),
});

/** Settings a partner gives a number (spec "Partner API", POST /api/partner/phone/{user}). */
export const PartnerPhoneSettings = Type.Object(
  {
    dialplan_enable: Type.Optional(
      Type.Boolean({ description: 'default false; when true the four switches below are ignored' }),
    ),
    call_enable: Type.Optional(
      Type.Boolean({ description: 'default false; the call API works only when it is the only switch on' }),
    ),
    recording_enable: Type.Optional(Type.Boolean({ description: 'default true' })),
    fax_enable: Type.Optional(Type.Boolean({ description: 'default true' })),
    conference_enable: Type.Optional(Type.Boolean({ description: 'default true' })),
    play_announcement_only: Type.Optional(Type.Boolean({ description: 'default false' })),
    notification_email: Type.Optional(
      Type.Union([Email, Type.Literal('')], { description: 'e-mail; "" removes it' }),
    ),
    notification_attachment: Type.Optional(Type.Boolean({ description: 'default false' })),
    p_asserted_identity: Type.Optional(
      Type.Union([Phone, Type.Null()], { description: 'PHONE; null removes it' }),
    ),
  },
  { additionalProperties: false },
);
export type PartnerPhoneSettings = Static<typeof PartnerPhoneSettings>;

const PhoneMap = Type.Record(Type.String({ pattern: '^\\+[0-9]{3,20}$' }), PartnerPhoneSettings, {
  additionalProperties: false,
  maxProperties: 1000,
});

export const PartnerPhoneBody = Type.Object({
  create: Type.Optional({
    ...PhoneMap,
    description: 'PHONE -> settings: free numbers of the pool given to the user',
  }),
  update: Type.Optional({ ...PhoneMap, description: "PHONE -> settings to change on the user's numbers" }),
  delete: Type.Optional(
    Type.Array(Phone, { maxItems: 1000, description: "the user's numbers taken back into the pool" }),
  ),
});
export type PartnerPhoneBody = Static<typeof PartnerPhoneBody>;
