/**
 * The rule engine's pure decisions (spec "Rules", "Rule activity"): whether a condition holds at
 * an instant and why, which edge of the current state is followed, and when the rule must next
 * be looked at. The checks of a rule body are rule-check.ts; the templates of its actions, one
 * look of the live engine and the dry run are rule-look.ts. No I/O: the live engine and
 * POST /api/rule/dry-run share it.
 *
 * How a rule runs (decided; docs/decisions.md):
 * - A rule is looked at when it enters a state (also on activation), when a sensor value
 *   arrives, and at the instants its conditions name (wakes). At each look the edges leaving the
 *   current state are tried in order; the first whose conditions all hold is followed: its
 *   actions run and the rule enters `to` (a timeout restarts also when `to` is the same state).
 * - `time` with `value` holds at that second only (on the clock's look, not on re-entry); with min/max it holds inside the range (over
 *   midnight when min > max) and wakes the rule at min. `weekday` and `date` hold all day and
 *   wake the rule at local midnight. `timeout` holds once the rule has been that long in its
 *   state. `sensor_data` holds while the last value matches; `sensor_event` only for a value that
 *   arrives now, after the rule was enabled.
 * - One look follows at most MAX_CHAIN edges, so that edges that always hold cannot spin.
 */
import { instantOf, isLeapYear, readLocal } from './rule-time.js';

export const WEEKDAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
/** Edges one look follows at most. */
export const MAX_CHAIN = 16;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Condition = { type: string } & Record<string, unknown>;
export type Action = { type: string } & Record<string, unknown>;

export interface Edge {
  from: string;
  to: string;
  conditions: Condition[];
  actions: Action[];
}

/** What the engine needs of a rule. */
export interface RuleDefinition {
  name: string;
  time_zone: string;
  initial_state: string;
  edges: Edge[];
  metadata: Record<string, Json>;
}

const TIME = /^([01][0-9]|2[0-3]):([0-5][0-9]|60):([0-5][0-9]|60)$/;
const DATE = /^(0[1-9]|[12][0-9]|3[01])\.(0[1-9]|1[0-2])$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** `hh:mm:ss` as seconds of the day (60 minutes or seconds carry over, as the spec allows 0-60). */
export function parseClock(text: string): number | null {
  const match = TIME.exec(text);
  if (!match) return null;
  return Math.min(Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]), 86_399);
}

/** `DD.MM` as [month, day], or null when the day does not exist in a leap year. */
export function parseDayOfYear(text: string): [number, number] | null {
  const match = DATE.exec(text);
  if (!match) return null;
  const day = Number(match[1]);
  const month = Number(match[2]);
  return day <= DAYS_IN_MONTH[month - 1]! ? [month, day] : null;
}

// ---- evaluation

/** Why the rule is looked at now. */
export type Cause =
  | { readonly kind: 'enter' }
  | { readonly kind: 'timer' }
  | { readonly kind: 'sensor'; readonly sensor: string; readonly value: readonly Json[] };

export interface Situation {
  /** Milliseconds since the epoch. */
  readonly now: number;
  readonly zone: string;
  /** When the rule entered its current state. */
  readonly since: number;
  /** When the rule was enabled: sensor_event takes only values after it. */
  readonly enabled: number;
  /** Last value of each sensor the rule reads. */
  readonly sensors: ReadonlyMap<string, readonly Json[]>;
  readonly cause: Cause;
}

export interface ConditionTrace {
  readonly condition: string;
  readonly holds: boolean;
  readonly why: string;
}

function matches(condition: Condition, value: readonly Json[]): boolean {
  const equal = Array.isArray(condition.value) ? (condition.value as Json[]) : [];
  const min = Array.isArray(condition.min) ? (condition.min as (number | null)[]) : [];
  const max = Array.isArray(condition.max) ? (condition.max as (number | null)[]) : [];
  for (const [index, wanted] of equal.entries())
    if (wanted !== null && JSON.stringify(value[index]) !== JSON.stringify(wanted)) return false;
  for (const [index, low] of min.entries()) {
    const got = value[index];
    if (low !== null && (typeof got !== 'number' || got < low)) return false;
  }
  for (const [index, high] of max.entries()) {
    const got = value[index];
    if (high !== null && (typeof got !== 'number' || got > high)) return false;
  }
  return true;
}

/** Month and day of a `DD.MM` bound in `year`: 29 Feb counts as 28 Feb in other years. */
function boundIn(text: string, year: number): number {
  const [month, day] = parseDayOfYear(text)!;
  return month * 100 + (month === 2 && day === 29 && !isLeapYear(year) ? 28 : day);
}

function within(value: number, low: number, high: number): boolean {
  return low <= high ? value >= low && value <= high : value >= low || value <= high;
}

function label(condition: Condition): string {
  const { type } = condition;
  if (type === 'and' || type === 'or') return type;
  if (type === 'not') return 'not';
  const parts = ['value', 'min', 'max', 'sensor']
    .filter((key) => condition[key] !== undefined)
    .map((key) => `${key}=${JSON.stringify(condition[key])}`);
  return `${type}(${parts.join(', ')})`;
}

/** Whether a condition holds now, with the reason (for traces). */
export function evaluate(condition: Condition, at: Situation): ConditionTrace {
  const result = (holds: boolean, why: string): ConditionTrace => ({
    condition: label(condition),
    holds,
    why,
  });
  // The local reading only for the conditions of the clock (it costs a zone lookup).
  let reading: ReturnType<typeof readLocal> | undefined;
  const local = () => {
    reading ??= readLocal(at.zone, at.now);
    return reading;
  };
  switch (condition.type) {
    case 'sensor_data': {
      const value = at.sensors.get(condition.sensor as string);
      if (!value) return result(false, 'no value of the sensor yet');
      return result(matches(condition, value), `last value ${JSON.stringify(value)}`);
    }
    case 'sensor_event': {
      const { cause } = at;
      if (cause.kind !== 'sensor' || cause.sensor !== condition.sensor)
        return result(false, 'no new value of the sensor now');
      return result(matches(condition, cause.value), `new value ${JSON.stringify(cause.value)}`);
    }
    case 'time': {
      if (typeof condition.value === 'string') {
        // An instant, not a span: it holds on the clock's look at that second, not again when
        // an edge taken then re-enters a state in the same second.
        const second = parseClock(condition.value)!;
        const exact =
          at.cause.kind === 'timer' &&
          [local().day, local().day - 1].some(
            (day) => Math.floor(instantOf(at.zone, day, second) / 1000) === Math.floor(at.now / 1000),
          );
        return result(exact, exact ? 'it is that time' : 'not that time');
      }
      const low = parseClock(condition.min as string)!;
      const high = parseClock(condition.max as string)!;
      const inside = within(local().second, low, high);
      return result(inside, inside ? 'inside the range' : 'outside the range');
    }
    case 'weekday': {
      const day = WEEKDAYS[local().weekday]!;
      return result((condition.value as string[]).includes(day), `it is ${day}`);
    }
    case 'date': {
      const { month, date, year } = local();
      const today = month * 100 + date;
      const holds =
        typeof condition.value === 'string'
          ? (() => {
              const [month, day] = parseDayOfYear(condition.value)!;
              return month * 100 + day === today;
            })()
          : within(today, boundIn(condition.min as string, year), boundIn(condition.max as string, year));
      return result(holds, `it is ${String(date).padStart(2, '0')}.${String(month).padStart(2, '0')}`);
    }
    case 'timeout': {
      const waited = Math.floor((at.now - at.since) / 1000);
      return result(waited >= (condition.value as number), `${waited} s in the state`);
    }
    case 'and':
    case 'or': {
      const inner = (condition.conditions as Condition[]).map((c) => evaluate(c, at));
      const holds = condition.type === 'and' ? inner.every((c) => c.holds) : inner.some((c) => c.holds);
      return result(holds, inner.map((c) => `${c.condition}: ${c.holds}`).join('; '));
    }
    case 'not': {
      const inner = evaluate(condition.condition as Condition, at);
      return result(!inner.holds, `${inner.condition}: ${inner.holds}`);
    }
    default:
      return result(false, 'unknown condition');
  }
}

/** The first local midnight after `after` of a day the predicate accepts, within `days` days. */
function nextMidnight(
  zone: string,
  after: number,
  days: number,
  accept: (day: number) => boolean,
): number | null {
  const start = readLocal(zone, after).day;
  for (let day = start; day <= start + days; day += 1) {
    if (!accept(day)) continue;
    const instant = instantOf(zone, day, 0);
    if (instant > after) return instant;
  }
  return null;
}

function nextClock(zone: string, after: number, second: number): number {
  const start = readLocal(zone, after).day - 1;
  for (let day = start; ; day += 1) {
    const instant = instantOf(zone, day, second);
    if (instant > after) return instant;
  }
}

/** The next instant after `after` at which the condition may change its mind; null: none. */
export function nextWake(condition: Condition, zone: string, since: number, after: number): number | null {
  switch (condition.type) {
    case 'time':
      return nextClock(zone, after, parseClock((condition.value ?? condition.min) as string)!);
    case 'weekday': {
      const wanted = new Set((condition.value as string[]).map((day) => WEEKDAYS.indexOf(day as never)));
      return nextMidnight(zone, after, 8, (day) => wanted.has((((day + 3) % 7) + 7) % 7));
    }
    case 'date': {
      const text = (condition.value ?? condition.min) as string;
      const [month, date] = parseDayOfYear(text)!;
      // A value of 29 Feb waits for a leap year (at most 8 years); a range bound counts as 28 Feb.
      return nextMidnight(zone, after, 366 * 8 + 2, (day) => {
        const at = new Date(day * 86_400_000);
        const year = at.getUTCFullYear();
        const wantedDay =
          condition.value === undefined && month === 2 && date === 29 && !isLeapYear(year) ? 28 : date;
        return at.getUTCMonth() + 1 === month && at.getUTCDate() === wantedDay;
      });
    }
    case 'timeout': {
      const due = since + (condition.value as number) * 1000;
      return due > after ? due : null;
    }
    case 'and':
    case 'or':
      return earliest((condition.conditions as Condition[]).map((c) => nextWake(c, zone, since, after)));
    case 'not':
      return nextWake(condition.condition as Condition, zone, since, after);
    default:
      return null;
  }
}

function earliest(instants: (number | null)[]): number | null {
  const real = instants.filter((instant): instant is number => instant !== null);
  return real.length === 0 ? null : Math.min(...real);
}

/** When the rule in `state` must next be looked at (after `after`), or null. */
export function wakeOf(rule: RuleDefinition, state: string, since: number, after: number): number | null {
  return earliest(
    rule.edges
      .filter((edge) => edge.from === state)
      .flatMap((edge) =>
        edge.conditions.map((condition) => nextWake(condition, rule.time_zone, since, after)),
      ),
  );
}

export interface EdgeDecision {
  /** Index of the edge in `edges`. */
  readonly edge: number;
  readonly from: string;
  readonly to: string;
  readonly conditions: ConditionTrace[];
}

/** The edge of `state` followed now (its index and why), or null with the traces of those tried. */
export function decideEdge(
  rule: RuleDefinition,
  state: string,
  at: Situation,
): { taken: EdgeDecision | null; tried: EdgeDecision[] } {
  const tried: EdgeDecision[] = [];
  for (const [index, edge] of rule.edges.entries()) {
    if (edge.from !== state) continue;
    const conditions = edge.conditions.map((condition) => evaluate(condition, at));
    const decision = { edge: index, from: edge.from, to: edge.to, conditions };
    if (conditions.every((c) => c.holds)) return { taken: decision, tried };
    tried.push(decision);
  }
  return { taken: null, tried };
}
