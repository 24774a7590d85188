/**
 * Events (spec "Events", decisions.md "Events"): one queue per session. Ids start at 0 and grow
 * by 1; the newest 1000 events are retained for 10 minutes, within 4 MB a session, so a client
 * can resume after a gap and see the gap in the ids. Long-polls wait here for the next id.
 *
 * An event pushed with `hold` is stored by the EventStore first and becomes readable when
 * `reveal` says it is durable: a client never sees an id that a crash could hand out again.
 */
import { type Clock, systemClock } from '../clock.js';
import { ApiError } from '../errors.js';

export interface SessionEvent {
  readonly id: number;
  readonly event: string;
  readonly time: number;
  readonly [field: string]: unknown;
}

export const EVENT_RETAIN_COUNT = 1000;
export const EVENT_RETAIN_SECONDS = 600;
export const EVENT_BATCH_MAX = 100;
/** Largest event, serialized (event name, skeleton and payload); larger ones are never sent. */
export const EVENT_MAX_BYTES = 256 * 1024;
/** What one session retains at most; beyond it the oldest events go first (the byte bound wins over 1000 / 10 minutes). */
export const EVENT_RETAIN_BYTES = 4 * 1024 * 1024;
/** Long-polls one session may hold; a further one answers the oldest held one at once. */
export const EVENT_WAITERS_MAX = 4;

/** Serialized size of an event whose payload serializes to `body` (the skeleton is about 40 bytes). */
export function eventBytes(event: string, body: string): number {
  return Buffer.byteLength(body) + Buffer.byteLength(event) + 40;
}

/** too-large when the event would exceed EVENT_MAX_BYTES: for calls that check before they change anything. */
export function assertEventSize(event: string, payload: Record<string, unknown>): void {
  if (eventBytes(event, JSON.stringify(payload)) > EVENT_MAX_BYTES)
    throw new ApiError('too-large', `the ${event} event would exceed ${EVENT_MAX_BYTES / 1024} KB`);
}

/** Events trim drops one by one (Array#shift); more at once go in one splice. */
const SHIFT_AT_MOST = 8;

interface Waiter {
  next: number;
  /** Answered once ids below this one are readable: next + 1, or every event pushed before the call. */
  until: number;
  resolve: (events: SessionEvent[]) => void;
  timer: NodeJS.Timeout | undefined;
}

export class EventQueue {
  /** The id the next event will get. */
  nextId: number;
  /** The session this queue belongs to (set when the hub attaches it); the store keys events by it. */
  did = '';
  /** POST /api/event/filter: the only event names the session receives; undefined: all. */
  filter: ReadonlySet<string> | undefined;
  /**
   * Topics the session subscribed to (GET /api/call/event: `call`), each until its expiry (ms
   * since the epoch): the events of a topic reach only the sessions subscribed to it.
   */
  readonly topics = new Map<string, number>();
  /** Ids below this one are readable (stored when the queue is stored); `next_event` of the session. */
  private visible: number;
  private retained: SessionEvent[];
  private sizes: number[];
  private retainedBytes = 0;
  private waiters: Waiter[] = [];
  /** Streaming readers (the WebSocket transport): told whenever more events become readable. */
  private readonly listeners = new Set<() => void>();

  constructor(
    nextId = 0,
    retained: SessionEvent[] = [],
    /** The wall clock the retention and the topic subscriptions are read against. */
    private readonly clock: Clock = systemClock,
  ) {
    this.nextId = nextId;
    this.visible = nextId;
    this.retained = retained;
    this.sizes = retained.map((entry) => {
      const { id: _id, event, time: _time, ...payload } = entry;
      return eventBytes(event, JSON.stringify(payload));
    });
    for (const size of this.sizes) this.retainedBytes += size;
    this.trim(Math.floor(this.clock.now() / 1000));
  }

  /**
   * Appends an event and returns its id. `bytes` is its serialized size (eventBytes); with
   * `hold` it stays unreadable until `reveal` passes its id.
   */
  push(
    event: string,
    payload: Record<string, unknown>,
    time = Math.floor(this.clock.now() / 1000),
    bytes = eventBytes(event, JSON.stringify(payload)),
    hold = false,
  ): number {
    const entry: SessionEvent = { ...payload, id: this.nextId, event, time };
    this.nextId += 1;
    this.retained.push(entry);
    this.sizes.push(bytes);
    this.retainedBytes += bytes;
    this.trim(time);
    if (!hold) this.reveal(this.nextId);
    return entry.id;
  }

  /** Makes events with ids below `upTo` readable and answers the long-polls waiting for them. */
  reveal(upTo: number): void {
    if (upTo <= this.visible) return;
    this.visible = Math.min(upTo, this.nextId);
    for (const listener of this.listeners) listener();
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      if (waiter.until <= this.visible) this.settle(waiter, this.read(waiter.next));
      else this.waiters.push(waiter);
    }
  }

  /** `next_event`: the id of the next event the session will be able to read. */
  get nextVisible(): number {
    return this.visible;
  }

  /**
   * Whether the session's filter lets an event of this name in; an event of a topic (EventHub
   * `topic`) only while the session's subscription to it runs.
   */
  accepts(event: string, topic?: string, now = this.clock.now()): boolean {
    if (topic !== undefined && !((this.topics.get(topic) ?? 0) > now)) return false;
    return this.filter === undefined || this.filter.has(event);
  }

  /** Readable retained events with id >= next, oldest first, at most EVENT_BATCH_MAX. */
  read(next: number): SessionEvent[] {
    const events = this.retained;
    if (events.length === 0 || next >= this.visible) return [];
    // Ids are contiguous inside the retained window, so the start index is arithmetic.
    const first = events[0]!.id;
    const from = Math.max(0, next - first);
    const to = Math.min(from + EVENT_BATCH_MAX, this.visible - first);
    return from < to ? events.slice(from, to) : [];
  }

  /**
   * Resolves with events as soon as one with id >= next is readable, or with [] after timeout
   * seconds. Events already pushed but not yet stored are waited for (all of them, even with
   * timeout 0), so that an answer holds every event emitted before the call.
   */
  wait(next: number, timeoutSeconds: number): Promise<SessionEvent[]> {
    const ready = this.read(next);
    const held = next < this.nextId && this.visible < this.nextId && ready.length < EVENT_BATCH_MAX;
    if (!held && (ready.length > 0 || timeoutSeconds <= 0)) return Promise.resolve(ready);
    if (this.waiters.length >= EVENT_WAITERS_MAX) {
      const oldest = this.waiters.shift()!;
      this.settle(oldest, this.read(oldest.next));
    }
    const until = held ? this.nextId : next + 1;
    return new Promise((resolve) => {
      const waiter: Waiter = { next, until, resolve, timer: undefined };
      if (timeoutSeconds > 0) {
        waiter.timer = setTimeout(() => {
          this.waiters = this.waiters.filter((other) => other !== waiter);
          resolve([]);
        }, timeoutSeconds * 1000);
      }
      this.waiters.push(waiter);
    });
  }

  /** Answers every pending long-poll now with what it has (used at shutdown and on close). */
  releaseWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) this.settle(waiter, this.read(waiter.next));
  }

  /**
   * Calls `listener` whenever more events become readable, until the returned function is
   * called. A listening reader counts as waiting (partner streams hand events to waiting sessions).
   */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get waiting(): number {
    return this.waiters.length + this.listeners.size;
  }

  /** Bytes of the retained events (serialized). */
  get bytes(): number {
    return this.retainedBytes;
  }

  snapshot(): SessionEvent[] {
    this.trim(Math.floor(this.clock.now() / 1000));
    return this.retained.slice();
  }

  private settle(waiter: Waiter, events: SessionEvent[]): void {
    if (waiter.timer) clearTimeout(waiter.timer);
    waiter.resolve(events);
  }

  private trim(now: number): void {
    const events = this.retained;
    let drop = Math.max(0, events.length - EVENT_RETAIN_COUNT);
    let bytes = this.retainedBytes;
    for (let i = 0; i < drop; i++) bytes -= this.sizes[i]!;
    while (
      drop < events.length &&
      (events[drop]!.time < now - EVENT_RETAIN_SECONDS || bytes > EVENT_RETAIN_BYTES)
    ) {
      bytes -= this.sizes[drop]!;
      drop += 1;
    }
    if (drop === 0) return;
    if (drop <= SHIFT_AT_MOST) {
      // A full queue drops one event a push: V8 shifts by moving the array's start, where a
      // splice at the front copies the other 999 (5–6 µs a push; trim was 2 % of a contact write).
      for (let i = 0; i < drop; i++) {
        events.shift();
        this.sizes.shift();
      }
    } else {
      events.splice(0, drop);
      this.sizes.splice(0, drop);
    }
    this.retainedBytes = bytes;
  }
}
