/**
 * One steady 20 ms send clock for every endpoint of a media engine (RFC 3551 4.5: 20 ms
 * packetisation). It schedules each tick against the start time rather than the previous
 * tick, so timer lateness does not accumulate; when the process stalls it catches up a few
 * frames and then skips, rather than bursting seconds of audio.
 *
 * The 20 ms are split into PHASES steps, 5 ms apart, and each member ticks in one of them
 * (the emptiest when it joins): the engine's sends and mixes are spread over the frame instead
 * of all leaving at one instant, so a busy engine does not make the last of its packets wait
 * behind all the others (docs/benchmarks.md "Conference mixer"). A member that must tick right
 * after another (a room's member endpoints after the room's mix) is moved to that one's phase.
 */
import { performance } from 'node:perf_hooks';

export const FRAME_MS = 20;
/** Steps of the frame; each member ticks in one of them, every FRAME_MS. */
export const PHASES = 4;
const STEP_MS = FRAME_MS / PHASES;
const MAX_CATCH_UP = 10 * PHASES;

export interface Tickable {
  tick(): void;
}

export class MediaClock {
  private readonly phases = Array.from({ length: PHASES }, () => new Set<Tickable>());
  private readonly phaseOf = new Map<Tickable, number>();
  private timer: NodeJS.Timeout | undefined;
  /** When the next step is due, and which phase it runs. */
  private next = 0;
  private step = 0;

  /** Adds `member` to the emptiest phase (or to `phase`), after the members already there. */
  add(member: Tickable, phase = this.emptiest()): void {
    this.remove(member);
    this.phases[phase]!.add(member);
    this.phaseOf.set(member, phase);
    if (!this.timer) {
      this.next = performance.now() + STEP_MS;
      this.schedule();
    }
  }

  /** Moves `member` to `after`'s phase, to tick after it (and after the others there). */
  follow(member: Tickable, after: Tickable): void {
    const phase = this.phaseOf.get(after);
    if (phase !== undefined && this.phaseOf.has(member)) this.add(member, phase);
  }

  remove(member: Tickable): void {
    const phase = this.phaseOf.get(member);
    if (phase === undefined) return;
    this.phases[phase]!.delete(member);
    this.phaseOf.delete(member);
    if (this.phaseOf.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  get size(): number {
    return this.phaseOf.size;
  }

  private emptiest(): number {
    let best = 0;
    for (let phase = 1; phase < PHASES; phase++)
      if (this.phases[phase]!.size < this.phases[best]!.size) best = phase;
    return best;
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.run(), Math.max(0, this.next - performance.now()));
  }

  private run(): void {
    const now = performance.now();
    let steps = 0;
    while (this.next <= now && steps < MAX_CATCH_UP) {
      for (const member of this.phases[this.step]!) {
        try {
          member.tick();
        } catch {
          // One endpoint's failure must not stop the others' audio.
        }
      }
      this.step = (this.step + 1) % PHASES;
      this.next += STEP_MS;
      steps++;
    }
    if (this.next <= now) this.next = now + STEP_MS;
    if (this.phaseOf.size > 0) this.schedule();
    else this.timer = undefined;
  }
}
