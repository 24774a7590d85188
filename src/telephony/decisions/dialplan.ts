/**
 * Dialplan v2 (spec "Dialplan v2", decisions.md "Telephony configuration"): the profile form,
 * the checks JSON Schema cannot express, the references a service must check, and the pure
 * decision which profile answers a call.
 *
 * Decisions where the spec is silent (documented in the OpenAPI document of the routes):
 * - filter.caller is searched in the caller id (RegExp.prototype.test semantics); anchor with
 *   ^ and $ to match the whole id. The literal `anonymous` matches calls with CLIR, and a
 *   pattern never matches an anonymous call.
 * - Times are wall-clock minutes in the filter's zone: a window crossing a DST change keeps its
 *   clock times (a 02:00-02:30 window does not occur on a spring-forward day in Europe/Berlin and
 *   occurs twice on a fall-back day). time_start absent = 00:00; time_end absent = end of the
 *   day; time_start not earlier than time_end = the window ends the next day (equal: 24 hours).
 *   The part of a window after midnight belongs to the day the window started: date, date range
 *   and weekdays are checked against that day (FRI 22:00-02:00 matches Saturday 01:00).
 * - `date` excludes weekdays, date_start and date_end (the spec says they should not be used
 *   together); date_end before date_start is refused; weekdays needs at least one day.
 * - Items of pin action arrays have the profile form; their filter, when present, decides whether
 *   the item runs (selectActions). Pins nest at most MAX_PIN_DEPTH deep; onStart holds no pin.
 */
import {
  formatDate,
  formatTime,
  isTimeZone,
  type LocalTime,
  parseDate,
  parseTime,
  WEEKDAYS,
  type Weekday,
  weekdayOf,
  type ZoneClock,
  zoneClock,
} from './clock.js';
import { compilePattern, type Pattern, patternFinds, patternProblem } from './pattern.js';
import { type Problem, Problems } from './problem.js';

/** How deep pin actions may nest inside pin action arrays (a pin in onSuccess of a pin is 2). */
export const MAX_PIN_DEPTH = 3;

export const ANONYMOUS = 'anonymous';

export interface TimeFilter {
  date?: string;
  date_start?: string;
  date_end?: string;
  weekdays?: Weekday[];
  time_start?: string;
  time_end?: string;
  time_zone?: string;
}

export interface Filter {
  caller?: string;
  time?: TimeFilter;
}

export interface Target {
  target: string;
  timeout?: number;
  clip_number?: string;
}

export interface PinParams {
  code: string;
  timeout?: number;
  onStart?: Profile[];
  onSuccess: Profile[];
  onFail?: Profile[];
  onTimeout?: Profile[];
}

/** The parameters of each action, by the action's member name. */
export interface ActionParams {
  reject: object;
  play: { announcement: string };
  record: { announcement: string };
  parallel: { targets: string[]; timeout?: number; clip_number?: string };
  linear: { targets: Target[]; timeout?: number; clip_number?: string };
  cyclic: { targets: Target[]; timeout?: number; clip_number?: string };
  pin: PinParams;
}

export type ActionName = keyof ActionParams;
export const ACTION_NAMES: readonly ActionName[] = [
  'reject',
  'play',
  'record',
  'parallel',
  'linear',
  'cyclic',
  'pin',
];

/** One action of a profile, tagged with its name. */
export type Action = { [K in ActionName]: { name: K; params: ActionParams[K] } }[ActionName];

/** A profile (and an item of a pin action array): an optional filter and exactly one action member. */
export interface Profile extends Partial<ActionParams> {
  filter?: Filter;
}

export interface Dialplan {
  description?: string;
  ringtone?: { announcement?: string; mix?: boolean };
  profiles?: Profile[];
}

/** The action members present in a profile, in ACTION_NAMES order. */
function actionMembers(profile: Profile): ActionName[] {
  return ACTION_NAMES.filter((name) => profile[name] !== undefined);
}

/** The one action of a profile that passed checkDialplan. */
export function actionOf(profile: Profile): Action {
  for (const name of ACTION_NAMES) {
    const params = profile[name];
    if (params !== undefined) return { name, params } as Action;
  }
  throw new Error('profile without action');
}

// ---- checks

interface Visit {
  item: Profile;
  path: string;
  /** pins around this item (0 for a profile). */
  pinDepth: number;
  inOnStart: boolean;
}

const PIN_ARRAYS = ['onStart', 'onSuccess', 'onFail', 'onTimeout'] as const;

function checkTimeFilter(time: TimeFilter, path: string, problems: Problems): void {
  const dates: Array<keyof TimeFilter> = ['date', 'date_start', 'date_end'];
  for (const key of dates) {
    const text = time[key];
    if (typeof text === 'string' && parseDate(text) === null) {
      problems.bad(`${path}.${key}`, `${text} is not an existing dd.MM.yyyy date`);
    }
  }
  for (const key of ['time_start', 'time_end'] as const) {
    const text = time[key];
    if (text !== undefined && parseTime(text) === null)
      problems.bad(`${path}.${key}`, `${text} is not hh:mm`);
  }
  if (time.date !== undefined) {
    for (const key of ['weekdays', 'date_start', 'date_end'] as const) {
      if (time[key] !== undefined) problems.bad(`${path}.${key}`, 'not allowed together with date');
    }
  }
  const start = time.date_start === undefined ? null : parseDate(time.date_start);
  const end = time.date_end === undefined ? null : parseDate(time.date_end);
  if (start !== null && end !== null && end < start) problems.bad(`${path}.date_end`, 'before date_start');
  if (time.weekdays?.length === 0) problems.bad(`${path}.weekdays`, 'at least one day');
  if (time.time_zone !== undefined && !isTimeZone(time.time_zone)) {
    problems.bad(`${path}.time_zone`, `${time.time_zone} is not an IANA time zone`);
  }
}

function checkFilter(filter: Filter, path: string, problems: Problems): void {
  if (filter.caller !== undefined && filter.caller !== ANONYMOUS) {
    const why = patternProblem(filter.caller);
    if (why) problems.bad(`${path}.caller`, why);
  }
  if (filter.time) checkTimeFilter(filter.time, `${path}.time`, problems);
}

/**
 * The first problem of a dialplan body that passed its schema, or null: exactly one action per
 * profile, pins without a pin in onStart and nested at most MAX_PIN_DEPTH, existing dates in
 * order, hh:mm times, IANA zones, caller patterns for RE2 of at most 500 characters.
 */
export function checkDialplan(dialplan: Dialplan, root = 'dialplan'): Problem | null {
  const problems = new Problems();
  const stack: Visit[] = (dialplan.profiles ?? [])
    .map((item, i) => ({ item, path: `${root}.profiles.${i}`, pinDepth: 0, inOnStart: false }))
    .reverse();
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const { item, path } = visit;
    if (item.filter) checkFilter(item.filter, `${path}.filter`, problems);
    const members = actionMembers(item);
    if (members.length === 0) problems.missing(path, 'action');
    if (members.length > 1) problems.bad(path, `more than one action (${members.join(', ')})`);
    const pin = item.pin;
    if (!pin) continue;
    if (visit.inOnStart) problems.bad(`${path}.pin`, 'onStart must not contain a pin');
    if (visit.pinDepth + 1 > MAX_PIN_DEPTH) {
      problems.bad(`${path}.pin`, `pins nested deeper than ${MAX_PIN_DEPTH}`);
      continue;
    }
    for (const key of PIN_ARRAYS) {
      const items = pin[key] ?? [];
      for (let i = items.length - 1; i >= 0; i--) {
        stack.push({
          item: items[i]!,
          path: `${path}.pin.${key}.${i}`,
          pinDepth: visit.pinDepth + 1,
          inOnStart: key === 'onStart',
        });
      }
    }
  }
  return problems.first;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The first profile (or pin array item) of a raw `{dialplan}` body without an action member,
 * judged before the schema checks formats (decisions.md order: missing-element before
 * wrong-syntax); the routes' `requires`. Reads the untrusted body without assuming its types,
 * in document order, down to MAX_PIN_DEPTH (deeper pins are wrong-syntax in checkDialplan).
 */
export function missingDialplanElement(body: Record<string, unknown>): string | undefined {
  const dialplan = body.dialplan;
  if (!isObject(dialplan) || !Array.isArray(dialplan.profiles)) return undefined;
  const stack: { item: unknown; path: string; depth: number }[] = dialplan.profiles
    .map((item: unknown, i) => ({ item, path: `dialplan.profiles.${i}`, depth: 0 }))
    .reverse();
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const { item, path, depth } = visit;
    if (!isObject(item)) continue;
    if (!ACTION_NAMES.some((name) => item[name] !== undefined)) return `${path} action`;
    const pin = item.pin;
    if (!isObject(pin) || depth >= MAX_PIN_DEPTH) continue;
    for (const key of [...PIN_ARRAYS].reverse()) {
      const items = pin[key];
      if (!Array.isArray(items)) continue;
      for (let i = items.length - 1; i >= 0; i--)
        stack.push({ item: items[i], path: `${path}.pin.${key}.${i}`, depth: depth + 1 });
    }
  }
  return undefined;
}

/** What a dialplan refers to, for the service's ownership checks (wrong-announcement, wrong-sip). */
export interface DialplanReferences {
  announcements: Set<string>;
  /** SIP account names among the targets (numbers need no check). */
  sips: Set<string>;
}

const SIPUSER = /^[a-z0-9]{2,20}_[0-9]{2}$/;

export function dialplanReferences(dialplan: Dialplan): DialplanReferences {
  const refs: DialplanReferences = { announcements: new Set(), sips: new Set() };
  if (dialplan.ringtone?.announcement) refs.announcements.add(dialplan.ringtone.announcement);
  const addTarget = (target: string) => {
    if (SIPUSER.test(target)) refs.sips.add(target);
  };
  const stack: Profile[] = [...(dialplan.profiles ?? [])];
  // Bounded by the body: every item is visited once (pin arrays are trees, not graphs).
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (item.play) refs.announcements.add(item.play.announcement);
    if (item.record) refs.announcements.add(item.record.announcement);
    for (const target of item.parallel?.targets ?? []) addTarget(target);
    for (const target of [...(item.linear?.targets ?? []), ...(item.cyclic?.targets ?? [])]) {
      addTarget(target.target);
    }
    if (item.pin) for (const key of PIN_ARRAYS) stack.push(...(item.pin[key] ?? []));
  }
  return refs;
}

// ---- compiled form and decision

interface CompiledTime {
  zone: number;
  date?: number;
  dateStart?: number;
  dateEnd?: number;
  /** bit n set = weekday n (MON = 0) allowed; 0 = any day. */
  weekdays: number;
  start?: number;
  end?: number;
}

export interface CompiledProfile {
  /** index in the array it came from */
  index: number;
  action: Action;
  /** undefined: any caller; null: only anonymous callers. */
  caller?: Pattern | null;
  callerSource?: string;
  time?: CompiledTime;
  /** compiled pin action arrays, when the action is a pin */
  pin?: { [K in (typeof PIN_ARRAYS)[number]]: CompiledProfile[] };
}

export interface CompiledDialplan {
  profiles: CompiledProfile[];
  /** distinct zones of the filters, read once per decision */
  zones: string[];
  clocks: ZoneClock[];
}

function compileItems(items: Profile[], zones: string[], depth: number): CompiledProfile[] {
  if (depth > MAX_PIN_DEPTH) throw new Error('pins nested too deep');
  return items.map((item, index) => compileProfile(item, index, zones, depth));
}

function zoneIndex(zones: string[], zone: string): number {
  const found = zones.indexOf(zone);
  if (found >= 0) return found;
  zones.push(zone);
  return zones.length - 1;
}

function compileProfile(item: Profile, index: number, zones: string[], depth: number): CompiledProfile {
  const compiled: CompiledProfile = { index, action: actionOf(item) };
  const caller = item.filter?.caller;
  if (caller !== undefined) {
    compiled.caller = caller === ANONYMOUS ? null : compilePattern(caller);
    compiled.callerSource = caller;
  }
  const time = item.filter?.time;
  if (time) {
    const optional = (text: string | undefined, parse: (text: string) => number | null) =>
      text === undefined ? undefined : (parse(text) ?? undefined);
    compiled.time = {
      zone: zoneIndex(zones, time.time_zone ?? 'UTC'),
      date: optional(time.date, parseDate),
      dateStart: optional(time.date_start, parseDate),
      dateEnd: optional(time.date_end, parseDate),
      weekdays: (time.weekdays ?? []).reduce((bits, day) => bits | (1 << WEEKDAYS.indexOf(day)), 0),
      start: optional(time.time_start, parseTime),
      end: optional(time.time_end, parseTime),
    };
  }
  if (item.pin) {
    const pin = item.pin;
    compiled.pin = {
      onStart: compileItems(pin.onStart ?? [], zones, depth + 1),
      onSuccess: compileItems(pin.onSuccess, zones, depth + 1),
      onFail: compileItems(pin.onFail ?? [], zones, depth + 1),
      onTimeout: compileItems(pin.onTimeout ?? [], zones, depth + 1),
    };
  }
  return compiled;
}

/** Compiles a dialplan that passed checkDialplan: patterns compiled and zones resolved once. */
export function compileDialplan(dialplan: Dialplan): CompiledDialplan {
  const zones: string[] = [];
  const profiles = compileItems(dialplan.profiles ?? [], zones, 0);
  return { profiles, zones, clocks: zones.map(zoneClock) };
}

/** A call as the dialplan sees it: caller id (null = anonymous, CLIR) and the instant (ms). */
export interface CallSituation {
  caller: string | null;
  instant: number;
}

export type MissReason = 'caller' | 'time' | 'date' | 'date-range' | 'weekday';

export interface TraceEntry {
  profile: number;
  reason: MissReason;
  /** a sentence for people, only with `explain` */
  detail?: string;
}

export interface DialplanDecision {
  /** index of the matching profile, or null when none matches (the call is not answered) */
  profile: number | null;
  action: Action | null;
  /** why each profile before the match (or every profile) did not match */
  trace: TraceEntry[];
}

const WEEKDAY_BIT = WEEKDAYS.map((_, i) => 1 << i);

/**
 * Why a compiled filter does not match, or null when it does; `local` reads a zone lazily. The
 * cheap time criteria come first, the caller pattern last (it scans the caller id).
 */
function missOf(
  profile: CompiledProfile,
  call: CallSituation,
  local: (zone: number) => LocalTime,
  explain: boolean,
): { reason: MissReason; detail?: string } | null {
  const time = profile.time;
  if (!time) return callerMiss(profile, call, explain);
  const now = local(time.zone);
  let day = now.day;
  if (time.start !== undefined || time.end !== undefined) {
    const start = time.start ?? 0;
    const end = time.end ?? 24 * 60;
    let inside: boolean;
    if (start < end) inside = now.minute >= start && now.minute < end;
    else if (now.minute >= start) inside = true;
    else {
      // after midnight: the window started the day before
      inside = now.minute < end;
      day -= 1;
    }
    if (!inside) {
      return {
        reason: 'time',
        detail: explain
          ? `time ${formatTime(now.minute)} is outside ${formatTime(start)}-${formatTime(end % 1440)}`
          : undefined,
      };
    }
  }
  if (time.date !== undefined && day !== time.date) {
    return {
      reason: 'date',
      detail: explain ? `date ${formatDate(day)} is not ${formatDate(time.date)}` : undefined,
    };
  }
  if (
    (time.dateStart !== undefined && day < time.dateStart) ||
    (time.dateEnd !== undefined && day > time.dateEnd)
  ) {
    return {
      reason: 'date-range',
      detail: explain ? `date ${formatDate(day)} is outside the date range` : undefined,
    };
  }
  if (time.weekdays !== 0 && (time.weekdays & WEEKDAY_BIT[weekdayOf(day)]!) === 0) {
    return {
      reason: 'weekday',
      detail: explain ? `${WEEKDAYS[weekdayOf(day)]} is not among the weekdays` : undefined,
    };
  }
  return callerMiss(profile, call, explain);
}

function callerMiss(
  profile: CompiledProfile,
  call: CallSituation,
  explain: boolean,
): { reason: MissReason; detail?: string } | null {
  if (profile.caller !== undefined) {
    const matches =
      profile.caller === null
        ? call.caller === null
        : call.caller !== null && patternFinds(profile.caller, call.caller);
    if (!matches) {
      return {
        reason: 'caller',
        detail: explain
          ? `caller ${call.caller ?? ANONYMOUS} does not match ${profile.callerSource}`
          : undefined,
      };
    }
  }
  return null;
}

function localReader(dialplan: CompiledDialplan, instant: number): (zone: number) => LocalTime {
  const cache: Array<LocalTime | undefined> = [];
  return (zone) => {
    let time = cache[zone];
    if (time === undefined) {
      time = dialplan.clocks[zone]!(instant);
      cache[zone] = time;
    }
    return time;
  };
}

export interface DecideOptions {
  /** first profile to consider: after a pin whose fallback is "the next profile action" */
  from?: number;
  /** add a sentence to each trace entry (the simulate route) */
  explain?: boolean;
}

/** Which profile answers the call: the first (from `options.from`) whose filter matches. */
export function decideDialplan(
  dialplan: CompiledDialplan,
  call: CallSituation,
  options: DecideOptions = {},
): DialplanDecision {
  const local = localReader(dialplan, call.instant);
  const explain = options.explain ?? false;
  const trace: TraceEntry[] = [];
  for (let i = options.from ?? 0; i < dialplan.profiles.length; i++) {
    const profile = dialplan.profiles[i]!;
    const miss = missOf(profile, call, local, explain);
    if (miss === null) return { profile: i, action: profile.action, trace };
    trace.push(
      explain
        ? { profile: i, reason: miss.reason, detail: miss.detail }
        : { profile: i, reason: miss.reason },
    );
  }
  return { profile: null, action: null, trace };
}

/**
 * The items of a compiled action array (a pin's onSuccess...) that run for this call, in order:
 * those without a filter or whose filter matches.
 */
export function selectActions(
  dialplan: CompiledDialplan,
  items: CompiledProfile[],
  call: CallSituation,
): Action[] {
  const local = localReader(dialplan, call.instant);
  return items.filter((item) => missOf(item, call, local, false) === null).map((item) => item.action);
}

/**
 * The order in which targets are called: linear from the first, cyclic from the round-robin
 * index the caller keeps (taken modulo the count), parallel all at once in the given order.
 */
export function orderTargets<T>(
  targets: readonly T[],
  mode: 'parallel' | 'linear' | 'cyclic',
  start = 0,
): T[] {
  if (mode !== 'cyclic' || targets.length === 0) return [...targets];
  const first = ((Math.trunc(start) % targets.length) + targets.length) % targets.length;
  return [...targets.slice(first), ...targets.slice(0, first)];
}
