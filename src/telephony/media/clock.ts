/**
 * One steady 20 ms send clock for every endpoint of a media engine (RFC 3551 4.5: 20 ms
 * packetisation). It schedules each tick against the start time rather than the previous
 * tick, so timer lateness does not accumulate; when the process stalls it catches up a few
 * frames and then skips, rather than bursting seconds of audio.
 */
import { performance } from 'node:perf_hooks';

export const FRAME_MS = 20;
const MAX_CATCH_UP = 10;

/** `value` on the 20 ms circle, in [0, 20). */
export function phaseOf(value: number): number {
  const phase = value % FRAME_MS;
  return phase < 0 ? phase + FRAME_MS : phase;
}

/** The signed distance from phase `from` to phase `to`, in [−10, 10). */
export function phaseDistance(from: number, to: number): number {
  return phaseOf(to - from + FRAME_MS / 2) - FRAME_MS / 2;
}

export interface Tickable {
  tick(): void;
}

export class MediaClock {
  private readonly members = new Set<Tickable>();
  private timer: NodeJS.Timeout | undefined;
  private next = 0;
  private running = false;
  /** A phase asked for by `align` during a run, applied before the run schedules. */
  private wanted: number | undefined;

  /** @param late told how late each run of the clock's timer came (ms after its first tick's time). */
  constructor(private readonly late?: (ms: number) => void) {}

  add(member: Tickable): void {
    this.members.add(member);
    if (!this.timer) {
      this.next = performance.now() + FRAME_MS;
      this.schedule();
    }
  }

  remove(member: Tickable): void {
    this.members.delete(member);
    if (this.members.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  get size(): number {
    return this.members.size;
  }

  /** The phase of the next tick in the 20 ms (of `performance.now()`), or undefined when stopped. */
  get phase(): number | undefined {
    return this.timer ? this.next % FRAME_MS : undefined;
  }

  /**
   * Moves the ticks to `phase` ms into each 20 ms of `performance.now()`: the next tick moves by
   * at most half a frame either way (never into the past), so one frame is shorter or longer.
   * Called from a tick, it takes effect when that tick's run schedules the next (one timer).
   */
  align(phase: number): void {
    if (!this.timer && !this.running) return;
    this.wanted = phase;
    if (this.running) return;
    clearTimeout(this.timer);
    this.applyPhase();
    this.schedule();
  }

  private applyPhase(): void {
    const phase = this.wanted;
    this.wanted = undefined;
    if (phase === undefined) return;
    let next = this.next + phaseDistance(this.next, phase);
    if (next <= performance.now()) next += FRAME_MS;
    this.next = next;
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.run(), Math.max(0, this.next - performance.now()));
  }

  private run(): void {
    const now = performance.now();
    this.late?.(now - this.next);
    this.running = true;
    let frames = 0;
    while (this.next <= now && frames < MAX_CATCH_UP) {
      for (const member of this.members) {
        try {
          member.tick();
        } catch {
          // One endpoint's failure must not stop the others' audio.
        }
      }
      this.next += FRAME_MS;
      frames++;
    }
    if (this.next <= now) this.next = now + FRAME_MS;
    this.applyPhase();
    this.running = false;
    if (this.members.size > 0) this.schedule();
    else this.timer = undefined;
  }
}
