/**
 * Schemas of spec "Rules" (`/api/rule`), plus the body of POST /api/rule/dry-run (Zentrale
 * extension). The condition and action forms, which nest, are checked by checkEdges
 * (rule-check.ts) in the same order as the schemas: missing-element, wrong-syntax, too-large.
 */
import { type Static, Type } from 'typebox';
import { Uuid } from '../../platform/formats.js';
import { named } from '../../platform/openapi/components.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

const State = Type.String({ pattern: '^.{1,200}$' });
const TimeZone = Type.String({ pattern: '^.{2,32}$', description: 'IANA time zone, default UTC' });
const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: 'any JSON object, at most 5 KB as JSON text (too-large)',
});
const Item = Type.Object(
  { type: Type.String({ maxLength: 50 }) },
  { additionalProperties: true, description: 'see the condition and action tables of spec "Rules"' },
);

export const Edge = Type.Object({
  from: State,
  to: State,
  conditions: Type.Array(Item, { maxItems: 100, description: 'all must hold (and)' }),
  actions: Type.Array(Item, { maxItems: 100, description: 'run in order when the edge is followed' }),
});

export const CreateRuleBody = Type.Object({
  name: Type.String({ pattern: '^.{1,200}$' }),
  time_zone: Type.Optional(TimeZone),
  initial_state: State,
  edges: Type.Array(Edge, { minItems: 1, maxItems: 500 }),
  active: Type.Optional(Type.Boolean({ default: true })),
  state: Type.Optional({ ...State, description: 'start state instead of initial_state (active rules only)' }),
  metadata: Type.Optional(Metadata),
});
export type CreateRuleBody = Static<typeof CreateRuleBody>;

export const UpdateRuleBody = Type.Object({
  name: Type.Optional(Type.String({ pattern: '^.{0,200}$' })),
  time_zone: Type.Optional(TimeZone),
  metadata: Type.Optional(Metadata),
  state: Type.Optional(Type.String({ pattern: '^.{0,200}$' })),
  active: Type.Optional(Type.Boolean()),
  initial_state: Type.Optional(State),
  edges: Type.Optional(Type.Array(Edge, { minItems: 1, maxItems: 500 })),
});
export type UpdateRuleBody = Static<typeof UpdateRuleBody>;

export const RuleParams = Type.Object({ uuid: Uuid });

export const RULE_LIST_COUNT = { default: 20, max: 500 };
export const ListRuleQuery = Type.Object(pageQuery(RULE_LIST_COUNT));
export type ListRuleQuery = Static<typeof ListRuleQuery>;

const Summary = Type.Object({
  name: Type.String(),
  active: Type.Boolean(),
  state: Type.String({ description: 'the current state; the last saved one if inactive' }),
  metadata: Metadata,
});
export const ListRuleAnswer = envelope({
  rule: Type.Record(Type.String(), Summary, { description: 'rules by id, in creation order' }),
});

export const RuleObject = named(
  'Rule',
  Type.Object({
    name: Type.String(),
    active: Type.Boolean(),
    state: Type.String(),
    time_zone: Type.String(),
    metadata: Metadata,
    initial_state: Type.String(),
    edges: Type.Array(Edge),
  }),
);
export type RuleObject = Static<typeof RuleObject>;
export const GetRuleAnswer = envelope({ rule: RuleObject });

// ---- dry run (Zentrale extension)

export const DRY_RUN_MAX_INPUTS = 1000;
/** Longest replayed span: a year and a day. */
export const DRY_RUN_MAX_SPAN = 366 * 86_400;

export const DryRunBody = Type.Object({
  rule: Type.Object({
    name: Type.Optional(Type.String({ pattern: '^.{0,200}$' })),
    time_zone: Type.Optional(TimeZone),
    initial_state: State,
    edges: Type.Array(Edge, { minItems: 1, maxItems: 500 }),
    metadata: Type.Optional(Metadata),
  }),
  state: Type.Optional({ ...State, description: 'start state; default initial_state' }),
  start: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 2 ** 40, description: 'seconds since epoch; default now' }),
  ),
  until: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 2 ** 40,
      description: 'end of the replay in seconds since epoch; default the last input, or start + 1 day',
    }),
  ),
  inputs: Type.Optional(
    Type.Array(
      Type.Object({
        time: Type.Integer({ minimum: 0, maximum: 2 ** 40, description: 'seconds since epoch' }),
        sensor: Uuid,
        value: Type.Array(Type.Unknown(), { minItems: 1, maxItems: 64, description: 'by capability index' }),
      }),
      {
        maxItems: DRY_RUN_MAX_INPUTS,
        description: 'sensor values in any order; those before start are the last values',
      },
    ),
  ),
});
export type DryRunBody = Static<typeof DryRunBody>;

const Trace = Type.Object({ condition: Type.String(), holds: Type.Boolean(), why: Type.String() });
export const DryRunAnswer = envelope({
  steps: Type.Array(
    Type.Object({
      time: Type.Integer({ description: 'seconds since epoch' }),
      cause: Type.Enum(['start', 'timer', 'sensor', 'enter'], {
        description: 'what made the rule look: the start, its clock, a sensor value, or entering a state',
      }),
      sensor: Type.Optional(Type.String()),
      from: Type.String(),
      to: Type.String(),
      edge: Type.Integer({ description: 'index of the edge followed' }),
      conditions: Type.Array(Trace, { description: 'each condition of the edge, why it held' }),
      actions: Type.Array(Type.Unknown(), { description: 'the actions that would run, templates rendered' }),
    }),
  ),
  state: Type.String({ description: 'the state at the end' }),
  next_wake: Type.Union([Type.Integer(), Type.Null()], { description: 'the next look after until' }),
  truncated: Type.Boolean({ description: 'true when 1000 steps ended the replay early' }),
});

export const TraceAnswer = envelope({
  trace: Type.Array(
    Type.Object({
      time: Type.Integer({
        description: 'seconds since epoch: the instant of the look (a wake looks at its own instant)',
      }),
      cause: Type.Enum(['start', 'timer', 'sensor', 'enter'], {
        description:
          'what made the rule look: activation or a jump (start), its clock, a sensor value, or entering a state',
      }),
      sensor: Type.Optional(Type.String()),
      from: Type.String(),
      to: Type.String(),
      edge: Type.Integer({ description: 'index of the edge followed' }),
      conditions: Type.Array(Trace, { description: 'each condition of the edge, why it held' }),
      actions: Type.Array(Type.Unknown(), {
        description:
          'the actions as they ran (templates rendered), each with `outcome`: {result: pending, running, done or failed; ' +
          'attempts; error}',
      }),
    }),
    { description: 'the last 100 transitions, newest first' },
  ),
});
