/**
 * Schemas of spec "IVR" (`/api/ivr` create and update body), plus the walk body of
 * POST /api/ivr/{uuid}/simulate (Zentrale extension). The rules JSON Schema cannot say (at least
 * one key; timeout.phone for call, timeout.announcement for play) are checkIvr in
 * src/telephony/decisions/ivr.ts.
 */
import { type Static, Type } from 'typebox';
import { Phone, Uuid } from '../../platform/formats.js';
import { UUID_PATTERN } from '../../platform/object-store/index.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';
import { IVR_KEYS, type Ivr } from '../../telephony/decisions/ivr.js';

const IvrKeyValue = Type.String({
  pattern: `^(?:${UUID_PATTERN.slice(1, -1)}|\\+[0-9]{3,20})$`,
  description: 'UUID of another IVR (runs it) or PHONE (redirects the call)',
});

const keys = Object.fromEntries(IVR_KEYS.map((key) => [key, Type.Optional(IvrKeyValue)]));

export const IvrBody = Type.Object(
  {
    description: Type.String({ pattern: '^.{1,200}$' }),
    announcement: { ...Uuid, description: 'UUID of an announcement, played first' },
    ...keys,
    other: Type.Optional(
      Type.String({
        pattern: '^(?:repeat|\\+[0-9]{3,20})$',
        description: 'repeat or PHONE: for an unspecified DTMF',
      }),
    ),
    timeout: Type.Optional(
      Type.Object({
        seconds: Type.Integer({ minimum: 1 }),
        action: Type.Enum(['repeat', 'call', 'play']),
        phone: Type.Optional({ ...Phone, description: 'PHONE; mandatory if action is call' }),
        announcement: Type.Optional({ ...Uuid, description: 'UUID; mandatory if action is play' }),
      }),
    ),
  },
  { description: 'at least one of the keys 0-9, *, # is mandatory' },
);
/** The keys are spread from a list, so the static type is the decisions' own. */
export type IvrBody = Ivr;

/** Events of a simulated walk: DTMF symbols, or `timeout` for the IVR's timeout passing. */
export const IvrSimulateBody = Type.Object({
  events: Type.Array(Type.Enum([...IVR_KEYS, 'timeout']), { maxItems: 100 }),
});
export type IvrSimulateBody = Static<typeof IvrSimulateBody>;

// ---- answers

export const IvrParams = Type.Object({ uuid: Uuid });
export const IVR_LIST_COUNT = { default: 30, max: 500 };
export const ListIvrQuery = Type.Object(pageQuery(IVR_LIST_COUNT));
export type ListIvrQuery = Static<typeof ListIvrQuery>;
export const ListIvrAnswer = envelope({
  ivr: Type.Array(Type.Object({ description: Type.String(), uuid: Uuid })),
});
export const GetIvrAnswer = envelope({ ivr: IvrBody });

/** Where a DTMF walk ends (POST /api/ivr/{uuid}/simulate). */
export const IvrSimulation = Type.Object({
  outcome: Type.Object({
    kind: Type.Enum(['waiting', 'redirect', 'play', 'missing-ivr'], {
      description:
        'waiting in an IVR, redirected to a number, ending after the timeout announcement, or at an IVR that no longer exists',
    }),
    ivr: Uuid,
    phone: Type.Optional(Phone),
    announcement: Type.Optional(Type.String()),
    missing: Type.Optional(Type.String()),
  }),
  trace: Type.Array(
    Type.Object({
      ivr: Type.String(),
      event: Type.String(),
      step: Type.String({
        description: 'announcement played, ivr run, redirect, repeat, play, ignored or missing-ivr',
      }),
      value: Type.Optional(Type.String()),
    }),
  ),
  unread: Type.Integer({ description: 'events left unread because the call ended before them' }),
});
export const IvrSimulateAnswer = envelope(IvrSimulation.properties);
