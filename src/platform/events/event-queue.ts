/**
 * Events (spec "Events", decisions.md "Events"): one queue per session. Ids start at 0 and grow
 * by 1; the newest 1000 events are retained for 10 minutes, so a client can resume after a gap
 * and see the gap in the ids. Long-polls wait here for the next id.
 */

export interface SessionEvent {
  readonly id: number;
  readonly event: string;
  readonly time: number;
  readonly [field: string]: unknown;
}

export const EVENT_RETAIN_COUNT = 1000;
export const EVENT_RETAIN_SECONDS = 600;
export const EVENT_BATCH_MAX = 100;

interface Waiter {
  next: number;
  resolve: (events: SessionEvent[]) => void;
  timer: NodeJS.Timeout | undefined;
}

export class EventQueue {
  /** The id the next event will get (`next_event`). */
  nextId: number;
  private retained: SessionEvent[];
  private waiters: Waiter[] = [];

  constructor(nextId = 0, retained: SessionEvent[] = []) {
    this.nextId = nextId;
    this.retained = retained;
  }

  push(event: string, payload: Record<string, unknown>, time = Math.floor(Date.now() / 1000)): void {
    const entry: SessionEvent = { ...payload, id: this.nextId, event, time };
    this.nextId += 1;
    this.retained.push(entry);
    this.trim(time);
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      if (waiter.next <= entry.id) this.settle(waiter, this.read(waiter.next));
      else this.waiters.push(waiter);
    }
  }

  /** Retained events with id >= next, oldest first, at most EVENT_BATCH_MAX. */
  read(next: number): SessionEvent[] {
    const events = this.retained;
    if (events.length === 0 || next >= this.nextId) return [];
    // Ids are contiguous inside the retained window, so the start index is arithmetic.
    const first = events[0]!.id;
    const from = Math.max(0, next - first);
    return events.slice(from, from + EVENT_BATCH_MAX);
  }

  /** Resolves with events as soon as one with id >= next exists, or with [] after timeout seconds. */
  wait(next: number, timeoutSeconds: number): Promise<SessionEvent[]> {
    const ready = this.read(next);
    if (ready.length > 0 || timeoutSeconds <= 0) return Promise.resolve(ready);
    return new Promise((resolve) => {
      const waiter: Waiter = { next, resolve, timer: undefined };
      waiter.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((other) => other !== waiter);
        resolve([]);
      }, timeoutSeconds * 1000);
      this.waiters.push(waiter);
    });
  }

  /** Answers every pending long-poll now with what it has (used at shutdown and on close). */
  releaseWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) this.settle(waiter, this.read(waiter.next));
  }

  get waiting(): number {
    return this.waiters.length;
  }

  snapshot(): SessionEvent[] {
    this.trim(Math.floor(Date.now() / 1000));
    return this.retained.slice();
  }

  private settle(waiter: Waiter, events: SessionEvent[]): void {
    if (waiter.timer) clearTimeout(waiter.timer);
    waiter.resolve(events);
  }

  private trim(now: number): void {
    const events = this.retained;
    let drop = Math.max(0, events.length - EVENT_RETAIN_COUNT);
    while (drop < events.length && events[drop]!.time < now - EVENT_RETAIN_SECONDS) drop += 1;
    if (drop > 0) events.splice(0, drop);
  }
}
