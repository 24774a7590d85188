/**
 * IVR (spec "IVR"): the checks JSON Schema cannot express, the references a service must check,
 * and the walk of a DTMF sequence through IVRs.
 *
 * Decisions where the spec is silent:
 * - A key or `other` naming an IVR runs that IVR (its announcement plays again from the start);
 *   a number redirects the call, which ends the walk.
 * - A symbol without a key and without `other` is ignored: the IVR keeps waiting.
 * - timeout.action `play` plays timeout.announcement and then ends the call; `repeat` starts the
 *   IVR again; `call` redirects to timeout.phone. Without a timeout the IVR waits for ever, so a
 *   timeout event there is ignored.
 * - A key naming an IVR that no longer exists ends the walk with `missing-ivr` (the engine hangs up).
 * The walk consumes one event per step, so cycles between IVRs cannot loop.
 */
import { type Problem, Problems } from './problem.js';

export const IVR_KEYS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '#'] as const;
export type IvrKey = (typeof IVR_KEYS)[number];

export interface IvrTimeout {
  seconds: number;
  action: 'repeat' | 'call' | 'play';
  phone?: string;
  announcement?: string;
}

export type Ivr = { [K in IvrKey]?: string } & {
  description: string;
  announcement: string;
  other?: string;
  timeout?: IvrTimeout;
};

const PHONE = /^\+[0-9]{3,20}$/;

/** The first problem of an IVR body that passed its schema, or null. */
export function checkIvr(ivr: Ivr): Problem | null {
  const problems = new Problems();
  if (!IVR_KEYS.some((key) => ivr[key] !== undefined)) problems.missing('0-9, * or #', '(at least one key)');
  const timeout = ivr.timeout;
  if (timeout?.action === 'call' && timeout.phone === undefined) problems.missing('timeout.phone');
  if (timeout?.action === 'play' && timeout.announcement === undefined)
    problems.missing('timeout.announcement');
  return problems.first;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The first element a raw IVR body lacks by the rules of checkIvr, judged before the schema
 * checks formats (decisions.md order: missing-element before wrong-syntax); the routes'
 * `requires`. Reads the untrusted body without assuming its types.
 */
export function missingIvrElement(body: Record<string, unknown>): string | undefined {
  if (!IVR_KEYS.some((key) => body[key] !== undefined)) return '0-9, * or # (at least one key)';
  const timeout = body.timeout;
  if (isObject(timeout)) {
    if (timeout.action === 'call' && timeout.phone === undefined) return 'timeout.phone';
    if (timeout.action === 'play' && timeout.announcement === undefined) return 'timeout.announcement';
  }
  return undefined;
}

export interface IvrReferences {
  announcements: Set<string>;
  /** IVRs the keys run (wrong-ivr when not the caller's) */
  ivrs: Set<string>;
}

export function ivrReferences(ivr: Ivr): IvrReferences {
  const refs: IvrReferences = { announcements: new Set([ivr.announcement]), ivrs: new Set() };
  if (ivr.timeout?.action === 'play' && ivr.timeout.announcement)
    refs.announcements.add(ivr.timeout.announcement);
  for (const key of IVR_KEYS) {
    const value = ivr[key];
    if (value !== undefined && !PHONE.test(value)) refs.ivrs.add(value);
  }
  return refs;
}

/** A caller's input: a DTMF symbol, or the IVR's timeout passing. */
export type IvrEvent = string | 'timeout';

export type IvrOutcome =
  | { kind: 'waiting'; ivr: string }
  | { kind: 'redirect'; ivr: string; phone: string }
  | { kind: 'play'; ivr: string; announcement: string }
  | { kind: 'missing-ivr'; ivr: string; missing: string };

export interface IvrTraceEntry {
  ivr: string;
  event: IvrEvent | 'start';
  /** what happened: `announcement` played, `ivr` run, `redirect`, `repeat`, `play`, `ignored` */
  step: 'announcement' | 'ivr' | 'redirect' | 'repeat' | 'play' | 'ignored' | 'missing-ivr';
  value?: string;
}

export interface IvrWalk {
  outcome: IvrOutcome;
  trace: IvrTraceEntry[];
  /** events left unread because the call ended before them */
  unread: number;
}

/**
 * Walks `events` from the IVR `start`. The outcome says where the call is after the last event
 * read: still waiting in an IVR, redirected to a number, ending after an announcement, or at a
 * missing IVR.
 */
export function walkIvr(ivrs: ReadonlyMap<string, Ivr>, start: string, events: readonly IvrEvent[]): IvrWalk {
  const trace: IvrTraceEntry[] = [];
  let current = start;
  const enter = (uuid: string, event: IvrEvent | 'start'): Ivr | null => {
    const ivr = ivrs.get(uuid);
    if (!ivr) {
      trace.push({ ivr: uuid, event, step: 'missing-ivr' });
      return null;
    }
    current = uuid;
    trace.push({ ivr: uuid, event, step: 'announcement', value: ivr.announcement });
    return ivr;
  };
  let ivr = enter(start, 'start');
  if (!ivr)
    return { outcome: { kind: 'missing-ivr', ivr: start, missing: start }, trace, unread: events.length };

  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    const ended = (outcome: IvrOutcome): IvrWalk => ({ outcome, trace, unread: events.length - i - 1 });
    // The action an event leads to: a number, `repeat`, or another IVR's UUID.
    let action: string | undefined;
    if (event === 'timeout') {
      const timeout = ivr.timeout;
      if (!timeout) {
        trace.push({ ivr: current, event, step: 'ignored' });
        continue;
      }
      if (timeout.action === 'play') {
        trace.push({ ivr: current, event, step: 'play', value: timeout.announcement });
        return ended({ kind: 'play', ivr: current, announcement: timeout.announcement ?? '' });
      }
      action = timeout.action === 'call' ? timeout.phone : 'repeat';
    } else {
      action = ivr[event as IvrKey] ?? ivr.other;
    }
    if (action === undefined) {
      trace.push({ ivr: current, event, step: 'ignored' });
    } else if (action === 'repeat') {
      trace.push({ ivr: current, event, step: 'repeat', value: ivr.announcement });
    } else if (PHONE.test(action)) {
      trace.push({ ivr: current, event, step: 'redirect', value: action });
      return ended({ kind: 'redirect', ivr: current, phone: action });
    } else {
      trace.push({ ivr: current, event, step: 'ivr', value: action });
      const from = current;
      const next = enter(action, event);
      if (!next) return ended({ kind: 'missing-ivr', ivr: from, missing: action });
      ivr = next;
    }
  }
  return { outcome: { kind: 'waiting', ivr: current }, trace, unread: 0 };
}
