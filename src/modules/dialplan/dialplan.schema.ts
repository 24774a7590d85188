/**
 * Schemas of spec "Dialplan v2" (`/api/dialplan/v2`, the profile form of decisions.md
 * "Telephony configuration") and "Legacy dialplan and call features" (POST /api/dialplan,
 * callthrough, callback, callreverse), plus the simulate bodies (Zentrale extension).
 * What JSON Schema cannot say (one action per profile, existing dates, zones, RE2 patterns) is
 * checked by checkDialplan in src/telephony/decisions/dialplan.ts.
 */
import { type Static, type TObject, type TProperties, Type } from 'typebox';
import { Description, Phone, SipUser, Uuid } from '../../platform/formats.js';
import { UUID_PATTERN } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { envelope } from '../../platform/schema.js';
import { WEEKDAYS } from '../../telephony/decisions/clock.js';
import type { Dialplan } from '../../telephony/decisions/dialplan.js';
import { MAX_PIN_DEPTH } from '../../telephony/decisions/dialplan.js';
import type { LegacyDialplanChange } from '../../telephony/decisions/legacy-dialplan.js';
import { MAX_PATTERN_LENGTH } from '../../telephony/decisions/pattern.js';

// ---- dialplan v2

const PHONE_OR_SIPUSER = '^(?:\\+[0-9]{3,20}|[a-z0-9]{2,20}_[0-9]{2})$';
const TargetString = Type.String({
  pattern: PHONE_OR_SIPUSER,
  description: 'PHONE or SIPUSER (a SIP account must be the caller’s own)',
});
const Seconds = Type.Integer({ description: 'seconds; default 0; below 1 means until network disconnect' });
const DDMMYYYY = Type.String({ pattern: '^[0-9]{2}\\.[0-9]{2}\\.[0-9]{4}$', description: 'dd.MM.yyyy' });
const HHMM = Type.String({ pattern: '^[0-9]{2}:[0-9]{2}$', description: 'hh:mm' });

export const DialplanFilter = named(
  'DialplanFilter',
  Type.Object({
    caller: Type.Optional(
      Type.String({
        maxLength: MAX_PATTERN_LENGTH,
        description:
          'RE2 regular expression searched in the caller id (anchor with ^ and $); `anonymous` matches calls with CLIR',
      }),
    ),
    time: Type.Optional(
      Type.Object({
        date: Type.Optional(DDMMYYYY),
        date_start: Type.Optional(DDMMYYYY),
        date_end: Type.Optional(DDMMYYYY),
        weekdays: Type.Optional(Type.Array(Type.Enum(WEEKDAYS), { minItems: 1 })),
        time_start: Type.Optional({ ...HHMM, description: 'hh:mm; absent: 00:00' }),
        time_end: Type.Optional({
          ...HHMM,
          description: 'hh:mm, exclusive; absent: end of day; not after time_start: the next day',
        }),
        time_zone: Type.Optional(
          Type.String({ pattern: '^.{2,32}$', description: 'IANA time zone, default UTC' }),
        ),
      }),
    ),
  }),
);

const CallTargets = {
  timeout: Type.Optional(Seconds),
  clip_number: Type.Optional(Phone),
};
const TargetObject = named(
  'DialplanTarget',
  Type.Object({
    target: TargetString,
    timeout: CallTargets.timeout,
    clip_number: Type.Optional({
      ...Phone,
      description:
        "the caller id this target sees (From); unset: the action's clip_number, else the caller's",
    }),
  }),
);
const SequentialTargets = named(
  'DialplanSequentialTargets',
  Type.Object({ targets: Type.Array(TargetObject, { minItems: 1 }), ...CallTargets }),
);

/**
 * A profile (and an item of a pin action array): an optional filter and one action member.
 * Built to a fixed depth (a pin holds items one level down), so the schema is finite and Ajv
 * never recurses over client data; a pin deeper than MAX_PIN_DEPTH is refused by checkDialplan.
 */
function profileSchema(pinLevels: number): TObject {
  const pin: TProperties =
    pinLevels === 0
      ? {}
      : {
          pin: Type.Optional(
            Type.Object({
              code: Type.String({ pattern: '^[0-9*#A-D]{1,20}$', description: 'DTMF symbols' }),
              timeout: Type.Optional(Type.Integer({ description: 'seconds; default 0 = never' })),
              onStart: Type.Optional(Type.Array(profileSchema(0), { description: 'must not contain a pin' })),
              onSuccess: Type.Array(profileSchema(pinLevels - 1)),
              onFail: Type.Optional(Type.Array(profileSchema(pinLevels - 1))),
              onTimeout: Type.Optional(Type.Array(profileSchema(pinLevels - 1))),
            }),
          ),
        };
  // Named per depth in the OpenAPI document: DialplanProfile0 holds no pin.
  return named(
    `DialplanProfile${pinLevels}`,
    Type.Object(
      {
        filter: Type.Optional(DialplanFilter),
        reject: Type.Optional(Type.Object({})),
        play: Type.Optional(Type.Object({ announcement: Uuid })),
        record: Type.Optional(Type.Object({ announcement: Uuid })),
        parallel: Type.Optional(
          Type.Object({ targets: Type.Array(TargetString, { minItems: 1 }), ...CallTargets }),
        ),
        linear: Type.Optional(SequentialTargets),
        cyclic: Type.Optional({
          ...SequentialTargets,
          description:
            'round-robin kept per dialplan: each call starts one target after the previous call started ' +
            '(whoever answered), per dialplan and action, modulo the current number of targets; the ' +
            'position is kept in the database, so every node and a restart continue the same round-robin',
        }),
        ...pin,
      },
      { description: 'an optional filter and exactly one action member' },
    ),
  );
}

export const DialplanV2 = named(
  'DialplanV2',
  Type.Object({
    description: Type.Optional(Description),
    ringtone: Type.Optional(
      Type.Object({ announcement: Type.Optional(Uuid), mix: Type.Optional(Type.Boolean()) }),
    ),
    profiles: Type.Optional(
      Type.Array(profileSchema(MAX_PIN_DEPTH), { description: 'evaluated first to last' }),
    ),
  }),
);

/** Body of POST /api/dialplan/v2 and POST /api/dialplan/v2/{uuid}. */
export const DialplanV2Body = Type.Object({ dialplan: DialplanV2 });
/** The profile schema is built to a depth, so its static type is the decisions' own. */
export type DialplanV2Body = { dialplan: Dialplan };

/** Body of POST /api/dialplan/v2/{uuid}/simulate (Zentrale extension). */
export const DialplanSimulateBody = Type.Object({
  caller: Type.String({
    pattern: '^.{1,64}$',
    description: 'caller id as the dialplan sees it; `anonymous` for a call with CLIR',
  }),
  time: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 253402300799,
      description: 'seconds since epoch (Conventions 6); default now',
    }),
  ),
});
export type DialplanSimulateBody = Static<typeof DialplanSimulateBody>;

// ---- legacy dialplan and call features

/** A format, or the empty string that deletes the field. */
function orEmpty(pattern: string, description: string) {
  return Type.String({
    pattern: `^(?:${pattern.slice(1, -1)})?$`,
    description: `${description}; "" deletes it`,
  });
}

const LegacyAction = Type.Enum(['none', 'redirect', 'reject', 'sip', 'record']);
const LegacyActionNotNone = Type.Enum(['redirect', 'reject', 'sip', 'record'], {
  description: 'none is not allowed',
});

export const LegacyDialplanBody = Type.Object({
  announcement: Type.Optional(orEmpty(UUID_PATTERN, 'UUID')),
  mix_ringtone: Type.Optional(Type.Boolean()),
  action: Type.Optional(LegacyAction),
  phone: Type.Optional(orEmpty('^\\+[0-9]{3,20}$', 'PHONE, target of redirect')),
  sip: Type.Optional(orEmpty('^[a-z0-9]{2,20}_[0-9]{2}$', 'SIPUSER, target of sip')),
  dial_prefix: Type.Optional(orEmpty('^\\+[0-9]{3,20}$', 'PHONE prepended to short numbers')),
  clip_number: Type.Optional(orEmpty('^\\+[0-9]{3,20}$', 'PHONE, calling line id of outgoing calls')),
  clir_enable: Type.Optional(Type.Boolean()),
  cti_via: Type.Optional(orEmpty('^\\+[0-9]{3,20}$', 'PHONE that receives callback calls')),
  callreverse_enable: Type.Optional(Type.Boolean()),
  timeout: Type.Optional(
    Type.Object({
      timeout: Type.Optional(Type.Integer({ minimum: 0, description: 'seconds of ringing' })),
      action: Type.Optional(LegacyActionNotNone),
    }),
  ),
  unavailable: Type.Optional(
    Type.Object({
      action: Type.Optional(LegacyActionNotNone),
      phone: Type.Optional(Phone),
      sip: Type.Optional(SipUser),
    }),
  ),
  busy: Type.Optional(
    Type.Object({
      action: Type.Optional(LegacyAction),
      phone: Type.Optional(Phone),
      sip: Type.Optional(SipUser),
    }),
  ),
  phone_pool: Type.Optional(
    Type.Object({
      add: Type.Optional(
        Type.Record(Phone, Type.Boolean(), {
          additionalProperties: false,
          description: 'number: active; overwrites existing entries',
        }),
      ),
      delete: Type.Optional(Type.Array(Phone)),
    }),
  ),
  sip_pool: Type.Optional(
    Type.Object({ add: Type.Optional(Type.Array(SipUser)), delete: Type.Optional(Type.Array(SipUser)) }),
  ),
});
export type LegacyDialplanBody = Static<typeof LegacyDialplanBody>;

const CallThroughPhone = Type.String({
  // The spec prints `^([a-zA-Z0-9]{2,20})|(\+[0-9]{3,20})$`; the alternation is meant whole.
  pattern: '^(?:[a-zA-Z0-9]{2,20}|\\+[0-9]{3,20})$',
});

/** POST /api/dialplan/callthrough: without phone the pending request is cleared. */
export const CallThroughBody = Type.Object({
  phone: Type.Optional(CallThroughPhone),
  filter: Type.Optional(Phone),
});
export type CallThroughBody = Static<typeof CallThroughBody>;

/** POST /api/dialplan/callback. */
export const CallbackBody = Type.Object({ from: Phone, to: CallThroughPhone });
export type CallbackBody = Static<typeof CallbackBody>;

/** POST /api/dialplan/callreverse. */
export const CallReverseBody = Type.Object({ filter: Phone });
export type CallReverseBody = Static<typeof CallReverseBody>;

// The schema's static type is the change the pure references function takes.
const legacyShape: (body: LegacyDialplanBody) => LegacyDialplanChange = (body) => body;
void legacyShape;

// ---- answers

const AnyParams = Type.Record(Type.String(), Type.Unknown());

/** The answer of a dialplan decision (POST /api/dialplan/v2/{uuid}/simulate). */
export const DialplanSimulation = Type.Object({
  profile: Type.Optional(
    Type.Integer({ description: 'index of the matching profile; absent when none matches (not answered)' }),
  ),
  action: Type.Optional(
    Type.Record(Type.String(), AnyParams, {
      description: 'the action that runs, in the profile form: {"<action>": {...}}',
    }),
  ),
  trace: Type.Array(
    Type.Object({
      profile: Type.Integer(),
      reason: Type.Enum(['caller', 'time', 'date', 'date-range', 'weekday']),
      detail: Type.Optional(Type.String()),
    }),
    { description: 'why each earlier profile did not match' },
  ),
});
export type DialplanSimulation = Static<typeof DialplanSimulation>;
export const DialplanSimulateAnswer = envelope(DialplanSimulation.properties);

export const DialplanParams = Type.Object({ uuid: Uuid });
export const GetDialplanAnswer = envelope({ dialplan: DialplanV2 });
export const ListDialplansAnswer = envelope({
  dialplan: Type.Array(Type.Object({ uuid: Uuid, description: Type.String() })),
});

const Fallback = Type.Object({
  action: Type.Optional(Type.String()),
  phone: Type.Optional(Type.String()),
  sip: Type.Optional(Type.String()),
});

/** GET /api/dialplan: the legacy dialplan object; unset fields are absent. */
export const LegacyDialplanView = named(
  'LegacyDialplan',
  Type.Object({
    announcement: Type.Optional(Uuid),
    mix_ringtone: Type.Optional(Type.Boolean()),
    clip_number: Type.Optional(Phone),
    dial_prefix: Type.Optional(Phone),
    clir_enable: Type.Optional(Type.Boolean()),
    cti_via: Type.Optional(Phone),
    action: Type.Optional(LegacyAction),
    phone: Type.Optional(Phone),
    sip: Type.Optional(SipUser),
    phone_pool: Type.Optional(Type.Record(Type.String(), Type.Boolean())),
    sip_pool: Type.Optional(Type.Array(SipUser)),
    callreverse_enable: Type.Optional(Type.Boolean()),
    timeout: Type.Optional(
      Type.Object({ timeout: Type.Optional(Type.Integer()), action: Type.Optional(Type.String()) }),
    ),
    unavailable: Type.Optional(Fallback),
    busy: Type.Optional(Fallback),
  }),
);
export const GetLegacyDialplanAnswer = envelope({ dialplan: LegacyDialplanView });

/** Which action and targets of the legacy dialplan answer (number simulate). */
export const LegacyDecisionView = Type.Object({
  situation: Type.String(),
  action: Type.String(),
  targets: Type.Array(
    Type.Object({
      phone: Type.Optional(Type.String()),
      sip: Type.Optional(Type.String()),
      callreverse: Type.Optional(Type.Boolean()),
    }),
  ),
  ringTimeout: Type.Optional(Type.Integer()),
  announcement: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
});
