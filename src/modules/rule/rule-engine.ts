/**
 * The rule engine's pure decisions (spec "Rules", "Rule activity"): the checks of a rule body that
 * JSON Schema cannot make, which edge of the current state is followed at an instant and why,
 * when the rule must next be looked at, the templates of its actions, and the dry run that
 * replays a timeline of inputs. No I/O: the live engine and POST /api/rule/dry-run share it.
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
import { ApiError } from '../../platform/errors.js';
import { Email, PHONE } from '../../platform/formats.js';
import { UUID_PATTERN } from '../../platform/object-store/index.js';
import { compileSchema } from '../../platform/validation.js';
import { isTimeZone, Problems } from '../../telephony/decisions/index.js';
import { instantOf, isLeapYear, isoParts, readLocal } from './rule-time.js';

export const WEEKDAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
/** Edges one look follows at most. */
export const MAX_CHAIN = 16;
/** Nesting of and/or/not at most. */
export const MAX_DEPTH = 8;
/** Conditions and actions of one rule at most (wrong-syntax beyond). */
export const MAX_ITEMS = 1000;
/** Rule metadata at most (spec Limits: too-large). */
export const MAX_METADATA_BYTES = 5 * 1024;
/** set_credit's credit at most (the usergroup's balance bound). */
export const MAX_CREDIT = 1_000_000_000_000;
/** The whole push message of a push_notification action at most (spec Limits: too-large). */
export const MAX_PUSH_BYTES = 2048;

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

const UUID = new RegExp(UUID_PATTERN);
const EMAIL = compileSchema(Email);
const TIME = /^([01][0-9]|2[0-3]):([0-5][0-9]|60):([0-5][0-9]|60)$/;
const DATE = /^(0[1-9]|[12][0-9]|3[01])\.(0[1-9]|1[0-2])$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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

/** Sensors the rule's conditions and actions name (for wrong-sensor). */
export function sensorsOf(edges: readonly Edge[]): { read: Set<string>; act: Set<string> } {
  const read = new Set<string>();
  const act = new Set<string>();
  const walk = (condition: Condition) => {
    if (typeof condition.sensor === 'string') read.add(condition.sensor);
    if (Array.isArray(condition.conditions))
      for (const inner of condition.conditions) walk(inner as Condition);
    if (isObject(condition.condition)) walk(condition.condition as Condition);
  };
  for (const edge of edges) {
    for (const condition of edge.conditions) walk(condition);
    for (const action of edge.actions) if (typeof action.sensor === 'string') act.add(action.sensor);
  }
  return { read, act };
}

/** Usergroups of set_credit actions (their authorisation is checked by the service). */
export function usergroupsOf(edges: readonly Edge[]): Set<string> {
  const groups = new Set<string>();
  for (const edge of edges)
    for (const action of edge.actions)
      if (action.type === 'set_credit' && typeof action.usergroup === 'string') groups.add(action.usergroup);
  return groups;
}

/** Every state the edges name. */
export function statesOf(edges: readonly Edge[]): Set<string> {
  return new Set(edges.flatMap((edge) => [edge.from, edge.to]));
}

/** A mandatory UUID field: missing-element when absent, wrong-syntax when not a UUID. */
function checkUuid(problems: Problems, path: string, value: unknown): void {
  if (value === undefined) problems.missing(path);
  else if (typeof value !== 'string' || !UUID.test(value)) problems.bad(path, 'UUID');
}

/** Whether `list` is an array of 1 to `max` entries (wrong-syntax, naming `what`, if not). */
function checkList(
  problems: Problems,
  path: string,
  list: unknown,
  max: number,
  what: string,
): list is unknown[] {
  if (Array.isArray(list) && list.length > 0 && list.length <= max) return true;
  problems.bad(path, `an array of 1 to ${max} ${what}`);
  return false;
}

function checkValues(problems: Problems, path: string, condition: Record<string, unknown>): void {
  const arrays = ['value', 'min', 'max'] as const;
  if (!arrays.some((key) => condition[key] !== undefined)) problems.missing(path, '(value, or min and max)');
  for (const key of arrays) {
    const list = condition[key];
    if (list === undefined || !checkList(problems, `${path}.${key}`, list, 64, 'capability values')) continue;
    if (key !== 'value' && list.some((entry) => entry !== null && typeof entry !== 'number'))
      problems.bad(`${path}.${key}`, 'numbers or null');
  }
  const min = Array.isArray(condition.min) ? condition.min : [];
  const max = Array.isArray(condition.max) ? condition.max : [];
  min.forEach((low, index) => {
    if (typeof low !== 'number') return;
    const high = max[index];
    if (typeof high !== 'number' || high <= low)
      problems.bad(`${path}.min.${index}`, 'each min entry needs a larger max entry');
  });
}

function checkRange(
  problems: Problems,
  path: string,
  condition: Record<string, unknown>,
  parse: (text: string) => unknown,
  form: string,
): void {
  const { value, min, max } = condition;
  if (value === undefined && (min === undefined || max === undefined)) {
    problems.missing(path, '(value, or min and max)');
    return;
  }
  for (const [key, text] of [
    ['value', value],
    ['min', min],
    ['max', max],
  ] as const) {
    if (text === undefined) continue;
    if (typeof text !== 'string' || parse(text) === null) problems.bad(`${path}.${key}`, form);
  }
}

function checkCondition(
  problems: Problems,
  path: string,
  raw: unknown,
  depth: number,
  count: { n: number },
): void {
  count.n += 1;
  if (!isObject(raw)) {
    problems.bad(path, 'a condition object');
    return;
  }
  if (raw.type === undefined) {
    problems.missing(`${path}.type`);
    return;
  }
  if (depth > MAX_DEPTH) {
    problems.bad(path, `conditions nest at most ${MAX_DEPTH} deep`);
    return;
  }
  switch (raw.type) {
    case 'sensor_data':
    case 'sensor_event':
      checkUuid(problems, `${path}.sensor`, raw.sensor);
      checkValues(problems, path, raw);
      return;
    case 'time': {
      checkRange(problems, path, raw, parseClock, 'hh:mm:ss');
      return;
    }
    case 'date': {
      checkRange(problems, path, raw, parseDayOfYear, 'DD.MM');
      return;
    }
    case 'weekday': {
      const value = raw.value;
      if (value === undefined) {
        problems.missing(`${path}.value`);
        return;
      }
      if (
        !Array.isArray(value) ||
        value.length === 0 ||
        value.length > 7 ||
        value.some((day) => !WEEKDAYS.includes(day as (typeof WEEKDAYS)[number]))
      )
        problems.bad(`${path}.value`, 'an array of MON..SUN');
      return;
    }
    case 'timeout': {
      const value = raw.value;
      if (value === undefined) {
        problems.missing(`${path}.value`);
        return;
      }
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 366 * 86_400)
        problems.bad(`${path}.value`, 'seconds, 1 to 31622400');
      return;
    }
    case 'and':
    case 'or': {
      const list = raw.conditions;
      if (list === undefined) {
        problems.missing(`${path}.conditions`);
        return;
      }
      if (!Array.isArray(list) || list.length === 0) {
        problems.bad(`${path}.conditions`, 'a non-empty array');
        return;
      }
      for (const [index, inner] of list.entries())
        checkCondition(problems, `${path}.conditions.${index}`, inner, depth + 1, count);
      return;
    }
    case 'not': {
      const inner = raw.condition;
      if (inner === undefined) {
        problems.missing(`${path}.condition`);
        return;
      }
      if (isObject(inner) && (inner.type === 'timeout' || inner.type === 'time'))
        problems.bad(`${path}.condition`, 'not on a timeout or time-of-day condition alone is invalid');
      checkCondition(problems, `${path}.condition`, inner, depth + 1, count);
      return;
    }
    default:
      problems.bad(`${path}.type`, 'sensor_data, sensor_event, time, weekday, date, timeout, and, or or not');
  }
}

function checkStrings(
  problems: Problems,
  path: string,
  list: unknown,
  format: { test(value: string): boolean },
  what: string,
): void {
  if (list === undefined) {
    problems.missing(path);
    return;
  }
  if (!checkList(problems, path, list, 100, what)) return;
  list.forEach((entry, index) => {
    if (typeof entry !== 'string' || !format.test(entry)) problems.bad(`${path}.${index}`, what);
  });
}

function checkText(problems: Problems, path: string, value: unknown, max: number, required: boolean): void {
  if (value === undefined) {
    if (required) problems.missing(path);
    return;
  }
  if (typeof value !== 'string' || value.length > max)
    problems.bad(path, `text of at most ${max} characters`);
}

function checkAction(problems: Problems, path: string, raw: unknown): void {
  if (!isObject(raw)) {
    problems.bad(path, 'an action object');
    return;
  }
  switch (raw.type) {
    case undefined: {
      problems.missing(`${path}.type`);
      return;
    }
    case 'sensor_action':
      checkUuid(problems, `${path}.sensor`, raw.sensor);
      if (raw.value === undefined) problems.missing(`${path}.value`);
      else checkList(problems, `${path}.value`, raw.value, 64, 'capability values');
      return;
    case 'email':
      checkStrings(problems, `${path}.recipients`, raw.recipients, EMAIL, 'e-mail addresses');
      checkText(problems, `${path}.subject`, raw.subject, 200, true);
      checkText(problems, `${path}.text`, raw.text, 10_000, true);
      return;
    case 'set_credit':
      checkUuid(problems, `${path}.usergroup`, raw.usergroup);
      if (raw.credit === undefined) problems.missing(`${path}.credit`);
      else if (
        typeof raw.credit !== 'number' ||
        !Number.isInteger(raw.credit) ||
        raw.credit < 1 ||
        raw.credit > MAX_CREDIT
      )
        problems.bad(`${path}.credit`, `a positive integer up to ${MAX_CREDIT}`);
      return;
    case 'push_notification': {
      if (raw.content === undefined) {
        problems.missing(`${path}.content`);
        return;
      }
      // The largest message a device may get: the content with the longest template values.
      const message = {
        message: 'rule_engine_notification',
        rule: '00000000-0000-1000-8000-000000000000',
        content: raw.content,
      };
      if (Buffer.byteLength(JSON.stringify(message)) > MAX_PUSH_BYTES)
        problems.add('too-large', `${path}: the push message is at most ${MAX_PUSH_BYTES} bytes`);
      return;
    }
    case 'call': {
      if (raw.from === undefined) problems.missing(`${path}.from`);
      else if (typeof raw.from !== 'string' || !PHONE.test(raw.from)) problems.bad(`${path}.from`, 'PHONE');
      if (raw.clip !== undefined && (typeof raw.clip !== 'string' || !PHONE.test(raw.clip)))
        problems.bad(`${path}.clip`, 'PHONE');
      checkText(problems, `${path}.from_name`, raw.from_name, 100, false);
      checkStrings(problems, `${path}.recipients`, raw.recipients, PHONE, 'PHONE numbers');
      const commands = raw.commands;
      if (commands === undefined) {
        problems.missing(`${path}.commands`);
        return;
      }
      if (!checkList(problems, `${path}.commands`, commands, 100, 'commands')) return;
      commands.forEach((command, index) => {
        const at = `${path}.commands.${index}`;
        if (isObject(command) && typeof command.silence === 'number') {
          if (!Number.isInteger(command.silence) || command.silence < 0 || command.silence > 600_000)
            problems.bad(`${at}.silence`, 'milliseconds, 0 to 600000');
        } else if (
          !isObject(command) ||
          typeof command.announcement !== 'string' ||
          !UUID.test(command.announcement)
        )
          problems.bad(at, '{silence: milliseconds} or {announcement: UUID}');
      });
      return;
    }
    default:
      problems.bad(`${path}.type`, 'sensor_action, email, set_credit, push_notification or call');
  }
}

/**
 * The first problem of edges that JSON Schema let through (missing-element before wrong-syntax
 * before too-large), as ApiError; the service checks sensors, usergroups and states after.
 */
export function checkEdges(edges: readonly unknown[], metadata?: unknown): void {
  const problems = new Problems();
  const count = { n: 0 };
  for (const [index, raw] of edges.entries()) {
    const path = `edges.${index}`;
    if (!isObject(raw)) {
      problems.bad(path, 'an edge object');
      continue;
    }
    for (const key of ['from', 'to'] as const) {
      const value = raw[key];
      if (value === undefined) problems.missing(`${path}.${key}`);
      else if (typeof value !== 'string' || !/^.{1,200}$/u.test(value))
        problems.bad(`${path}.${key}`, '1 to 200 characters');
    }
    for (const key of ['conditions', 'actions'] as const) {
      const list = raw[key];
      if (list === undefined) problems.missing(`${path}.${key}`);
      else if (!Array.isArray(list)) problems.bad(`${path}.${key}`, 'an array');
    }
    if (Array.isArray(raw.conditions))
      for (const [i, condition] of raw.conditions.entries())
        checkCondition(problems, `${path}.conditions.${i}`, condition, 1, count);
    if (Array.isArray(raw.actions)) {
      count.n += raw.actions.length;
      for (const [i, action] of raw.actions.entries()) checkAction(problems, `${path}.actions.${i}`, action);
    }
  }
  if (count.n > MAX_ITEMS) problems.bad('edges', `at most ${MAX_ITEMS} conditions and actions`);
  if (metadata !== undefined && Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES)
    problems.add('too-large', `metadata is at most ${MAX_METADATA_BYTES} bytes`);
  const first = problems.first;
  if (first) throw new ApiError(first.status, first.message);
}

/** wrong-syntax unless the zone is one of the IANA database. */
export function checkTimeZone(zone: string): void {
  if (!isTimeZone(zone))
    throw new ApiError('wrong-syntax', `bad time_zone: ${zone.slice(0, 40)} is no IANA zone`);
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
