/**
 * The wall clock of services: milliseconds since the epoch, read through one interface so a
 * test can set the time a service sees instead of waiting for it. The media engine's 20 ms RTP
 * pacing (src/telephony/media/clock.ts) is a different thing, a monotonic interval timer, and
 * does not read this clock.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The system's clock, the default everywhere. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that stands still until a test sets or advances it. */
export class SettableClock implements Clock {
  constructor(private ms: number = Date.now()) {}

  now(): number {
    return this.ms;
  }

  set(ms: number): void {
    this.ms = ms;
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}
