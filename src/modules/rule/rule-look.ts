/**
 * The rule's runs (spec "Rules", "Rule activity"): the templates of its actions, one look of the
 * live engine (`follow`, used by rule-runner.ts) and the dry run of POST /api/rule/dry-run that
 * replays a timeline of inputs. Pure: the decisions are rule-engine.ts.
 */
import {
  type Action,
  type Cause,
  type ConditionTrace,
  decideEdge,
  type Json,
  MAX_CHAIN,
  type RuleDefinition,
  wakeOf,
} from './rule-engine.js';
import { isoParts } from './rule-time.js';

// ---- templates

function metadataAt(metadata: Record<string, Json>, path: string): string {
  let value: Json | undefined = metadata;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return '';
    value = (value as Record<string, Json>)[key];
  }
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * ${NAME}, ${STATE} (the state the edge leads to), ${ISO_DATE}, ${ISO_DATE_TIME}, ${ISO_TIME} (in
 * the rule's zone, with its offset) and ${METADATA.path}; unknown names stay as written.
 */
export function renderTemplate(text: string, rule: RuleDefinition, state: string, now: number): string {
  const iso = isoParts(rule.time_zone, now);
  return text.replace(/\$\{([A-Z_]+)(?:\.([A-Za-z0-9_.-]+))?\}/g, (whole, name: string, path?: string) => {
    switch (name) {
      case 'NAME':
        return rule.name;
      case 'STATE':
        return state;
      case 'ISO_DATE':
        return iso.date;
      case 'ISO_TIME':
        return iso.time;
      case 'ISO_DATE_TIME':
        return iso.dateTime;
      case 'METADATA':
        return path ? metadataAt(rule.metadata, path) : whole;
      default:
        return whole;
    }
  });
}

function renderJson(value: Json, render: (text: string) => string): Json {
  if (typeof value === 'string') return render(value);
  if (Array.isArray(value)) return value.map((item) => renderJson(item, render));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderJson(item, render)]));
  return value;
}

/** The action as it runs: templates of email subject/text and push content rendered. */
export function renderAction(action: Action, rule: RuleDefinition, state: string, now: number): Action {
  const render = (text: string) => renderTemplate(text, rule, state, now);
  if (action.type === 'email')
    return { ...action, subject: render(action.subject as string), text: render(action.text as string) };
  if (action.type === 'push_notification')
    return { ...action, content: renderJson(action.content as Json, render) };
  return action;
}

// ---- dry run

export interface TimelineInput {
  /** Seconds since the epoch. */
  readonly time: number;
  readonly sensor: string;
  readonly value: readonly Json[];
}

export interface DryRunStep {
  readonly time: number;
  readonly cause: 'start' | 'timer' | 'sensor' | 'enter';
  readonly sensor?: string;
  readonly from: string;
  readonly to: string;
  readonly edge: number;
  readonly conditions: ConditionTrace[];
  readonly actions: Action[];
}

export interface DryRunResult {
  readonly steps: DryRunStep[];
  readonly state: string;
  /** Seconds since the epoch of the next look after `until`, if any. */
  readonly next_wake: number | null;
  /** True when MAX_STEPS ended the run early. */
  readonly truncated: boolean;
}

/** Transitions a dry run reports at most. */
export const MAX_STEPS = 1000;

/**
 * Replays the rule from `start` (seconds) in `state` through the inputs up to `until`: the states
 * visited, the edges taken with the conditions that decided each, and the actions that would
 * run (rendered). Sensor values given before `start` are the sensors' last values at start.
 */
export function dryRun(
  rule: RuleDefinition,
  options: { start: number; until: number; state?: string; inputs: readonly TimelineInput[] },
): DryRunResult {
  const steps: DryRunStep[] = [];
  const sensors = new Map<string, readonly Json[]>();
  const inputs = [...options.inputs].sort((a, b) => a.time - b.time);
  let next = 0;
  for (; next < inputs.length && inputs[next]!.time < options.start; next += 1)
    sensors.set(inputs[next]!.sensor, inputs[next]!.value);
  const startMs = options.start * 1000;
  const untilMs = options.until * 1000;
  let state = options.state ?? rule.initial_state;
  let since = startMs;
  let truncated = false;

  const look = (now: number, first: Cause, kind: DryRunStep['cause'], sensor?: string) => {
    let cause = first;
    for (let chain = 0; chain < MAX_CHAIN; chain += 1) {
      if (steps.length >= MAX_STEPS) {
        truncated = true;
        return;
      }
      const { taken } = decideEdge(rule, state, {
        now,
        zone: rule.time_zone,
        since,
        enabled: startMs,
        sensors,
        cause,
      });
      if (!taken) return;
      const actions = rule.edges[taken.edge]!.actions.map((action) =>
        renderAction(action, rule, taken.to, now),
      );
      steps.push({
        time: Math.floor(now / 1000),
        cause: chain === 0 ? kind : 'enter',
        ...(sensor && chain === 0 ? { sensor } : {}),
        from: taken.from,
        to: taken.to,
        edge: taken.edge,
        conditions: taken.conditions,
        actions,
      });
      state = taken.to;
      since = now;
      // The new state is looked at on entry; the value that arrived is not new to it.
      cause = { kind: 'enter' };
    }
  };

  // The instant the run has reached: wakes are looked for after it.
  let clock = startMs;
  look(startMs, { kind: 'enter' }, 'start');
  while (!truncated) {
    const wake = wakeOf(rule, state, since, clock);
    const input = inputs[next];
    const inputAt = input ? input.time * 1000 : null;
    if (input && inputAt !== null && inputAt <= untilMs && (wake === null || inputAt < wake)) {
      sensors.set(input.sensor, input.value);
      next += 1;
      clock = Math.max(clock, inputAt);
      look(inputAt, { kind: 'sensor', sensor: input.sensor, value: input.value }, 'sensor', input.sensor);
      continue;
    }
    if (wake === null || wake > untilMs)
      return { steps, state, next_wake: wake === null ? null : Math.floor(wake / 1000), truncated };
    clock = wake;
    look(wake, { kind: 'timer' }, 'timer');
  }
  return { steps, state, next_wake: null, truncated };
}

// ---- one look of the live engine

export interface LookStep {
  readonly cause: 'start' | 'timer' | 'sensor' | 'enter';
  readonly sensor?: string;
  readonly from: string;
  readonly to: string;
  readonly edge: number;
  readonly conditions: ConditionTrace[];
  readonly actions: Action[];
}

/**
 * One look of a live rule at `now` (the live engine's counterpart of the dry run's look): the
 * edges followed from `state` (at most MAX_CHAIN), with their actions rendered, and where the rule
 * ends up. `first` says why it looks: 'start' (activation), 'timer' (a wake) or a sensor value.
 */
export function follow(
  rule: RuleDefinition,
  at: {
    state: string;
    since: number;
    enabled: number;
    now: number;
    sensors: ReadonlyMap<string, readonly Json[]>;
  },
  first: 'start' | 'timer' | { sensor: string; value: readonly Json[] },
): { steps: LookStep[]; state: string; since: number; next_wake: number | null } {
  const steps: LookStep[] = [];
  let { state, since } = at;
  let cause: Cause =
    first === 'start'
      ? { kind: 'enter' }
      : first === 'timer'
        ? { kind: 'timer' }
        : { kind: 'sensor', sensor: first.sensor, value: first.value };
  for (let chain = 0; chain < MAX_CHAIN; chain += 1) {
    const { taken } = decideEdge(rule, state, {
      now: at.now,
      zone: rule.time_zone,
      since,
      enabled: at.enabled,
      sensors: at.sensors,
      cause,
    });
    if (!taken) break;
    const kind = chain > 0 ? 'enter' : typeof first === 'string' ? first : 'sensor';
    steps.push({
      cause: kind,
      ...(chain === 0 && typeof first !== 'string' ? { sensor: first.sensor } : {}),
      from: taken.from,
      to: taken.to,
      edge: taken.edge,
      conditions: taken.conditions,
      actions: rule.edges[taken.edge]!.actions.map((action) => renderAction(action, rule, taken.to, at.now)),
    });
    state = taken.to;
    since = at.now;
    cause = { kind: 'enter' };
  }
  return { steps, state, since, next_wake: wakeOf(rule, state, since, at.now) };
}
