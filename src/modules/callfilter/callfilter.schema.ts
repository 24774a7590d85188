/**
 * Schemas of spec "Partner API" POST/GET /api/partner/callfilter/{user-uuid} (operator form of
 * decisions.md "Partner API"), plus the simulate body (Zentrale extension). A filter nests
 * groups, so its schema stops at "array": the operators are judged by checkCallFilter
 * (src/telephony/decisions/callfilter.ts) by iteration, with the same missing-element and
 * wrong-syntax statuses, and too-large beyond 250 operators.
 */
import { type Static, Type } from 'typebox';
import { Uuid } from '../../platform/formats.js';
import { envelope } from '../../platform/schema.js';
import { CALL_SERVICES, type CallFilter, MAX_OPERATORS } from '../../telephony/decisions/callfilter.js';

export const CallFilterOperator = Type.Object(
  {
    type: Type.Enum(['replace', 'match', 'service']),
    key: Type.String({
      description: `replace, match: RE2 regular expression searched in the destination; service: one of ${CALL_SERVICES.join(', ')}`,
    }),
    value: Type.Optional(Type.String({ description: 'replace only: the replacement ($1 for groups)' })),
    pass: Type.Optional(Type.Boolean({ description: 'match, service: true allows, false denies at once' })),
    break: Type.Optional(Type.Literal(true, { description: 'match, service: ends the current array' })),
    reverse: Type.Optional(Type.Literal(true, { description: 'match, service: negates the condition' })),
  },
  { description: 'a call filter operator; an array in its place is a group' },
);

const CallFilterValue = Type.Array(Type.Unknown(), {
  description: `operators (CallFilterOperator) and groups (nested arrays); at least one and at most ${MAX_OPERATORS} operators`,
});

export const CallFilterBody = Type.Object({ callfilter: CallFilterValue });
export type CallFilterBody = { callfilter: CallFilter };

/** Body of the call filter simulate route: the stored filter, or the one given. */
export const CallFilterSimulateBody = Type.Object({
  callfilter: Type.Optional(CallFilterValue),
  destination: Type.String({ pattern: '^.{1,64}$', description: 'the dialled destination' }),
  service: Type.Enum(CALL_SERVICES),
});
export type CallFilterSimulateBody = Static<typeof CallFilterSimulateBody>;

export const CallFilterParams = Type.Object({ user: Uuid });

export const GetCallFilterAnswer = envelope({
  callfilter: Type.Array(Type.Unknown(), { description: 'the stored filter, as it was set' }),
});

export const CallFilterSimulateAnswer = envelope({
  allowed: Type.Boolean(),
  destination: Type.String({ description: 'the destination after the replacements that ran' }),
  decided_by: Type.Union([Type.String(), Type.Null()], {
    description: 'path of the operator that decided (`callfilter.1.0`), null when none did',
  }),
  trace: Type.Array(
    Type.Object({
      operator: Type.String({ description: 'path of the operator' }),
      destination: Type.Optional(Type.String({ description: 'replace: the destination after it' })),
      held: Type.Optional(
        Type.Boolean({ description: 'match, service: whether the condition held (after reverse)' }),
      ),
      effect: Type.Optional(Type.Enum(['pass', 'deny', 'break'])),
    }),
    { description: 'the operators that ran, in order' },
  ),
});
