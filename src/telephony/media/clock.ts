/**
 * One steady 20 ms send clock for every endpoint of a media engine (RFC 3551 4.5: 20 ms
 * packetisation). It schedules each tick against the start time rather than the previous
 * tick, so timer lateness does not accumulate; when the process stalls it catches up a few
 * frames and then skips, rather than bursting seconds of audio.
 */
import { performance } from 'node:perf_hooks';

export const FRAME_MS = 20;
const MAX_CATCH_UP = 10;

export interface Tickable {
  tick(): void;
}

export class MediaClock {
  private readonly members = new Set<Tickable>();
  private timer: NodeJS.Timeout | undefined;
  private next = 0;

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
   */
  align(phase: number): void {
    if (!this.timer) return;
    const base = this.next - (this.next % FRAME_MS);
    let next = base + phase;
    if (next - this.next > FRAME_MS / 2) next -= FRAME_MS;
    else if (this.next - next > FRAME_MS / 2) next += FRAME_MS;
    const now = performance.now();
    if (next <= now) next += FRAME_MS;
    this.next = next;
    clearTimeout(this.timer);
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.run(), Math.max(0, this.next - performance.now()));
  }

  private run(): void {
    const now = performance.now();
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
    if (this.members.size > 0) this.schedule();
    else this.timer = undefined;
  }
}
