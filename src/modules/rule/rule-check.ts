/**
 * The checks of a rule body that JSON Schema cannot make (spec "Rules": POST and PUT /api/rule,
 * Limits), and what a body names (sensors, usergroups, states) for the service's own checks.
 * Status order as in rule.schema.ts: missing-element, wrong-syntax, too-large.
 */
import { ApiError } from '../../platform/errors.js';
import { Email, PHONE } from '../../platform/formats.js';
import { UUID_PATTERN } from '../../platform/object-store/index.js';
import { compileSchema } from '../../platform/validation.js';
import { isTimeZone, Problems } from '../../telephony/decisions/index.js';
import { type Condition, type Edge, parseClock, parseDayOfYear, WEEKDAYS } from './rule-engine.js';

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

const UUID = new RegExp(UUID_PATTERN);
const EMAIL = compileSchema(Email);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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

/** Conferences that call actions put their calls into (the owner must be able to write them). */
export function conferencesOf(edges: readonly Edge[]): Set<string> {
  const rooms = new Set<string>();
  for (const edge of edges)
    for (const action of edge.actions)
      if (action.type === 'call' && Array.isArray(action.commands))
        for (const command of action.commands)
          if (isObject(command) && typeof command.conference === 'string') rooms.add(command.conference);
  return rooms;
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
        } else if (isObject(command) && command.conference !== undefined) {
          // The call stays in the room until it leaves it: nothing can come after.
          if (typeof command.conference !== 'string' || !UUID.test(command.conference))
            problems.bad(`${at}.conference`, 'UUID');
          else if (index !== commands.length - 1)
            problems.bad(at, '{conference: UUID} only as the last command');
        } else if (
          !isObject(command) ||
          typeof command.announcement !== 'string' ||
          !UUID.test(command.announcement)
        )
          problems.bad(at, '{silence: milliseconds}, {announcement: UUID} or {conference: UUID}');
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
