/**
 * The conference mixer's own delay (docs/decisions.md "Conferences", the room's clock): how long
 * each member's frame waited in the media worker, from the arrival of the packet that completed
 * it to the mix that carried it to the others (mixer.ts `delay`). A histogram, so that counting
 * 25,000 frames a second keeps no list; the worker keeps one for all its rooms. Beside it, what
 * explains a long one: how many frames waited behind another of the same member (a queue that
 * jitter or bunched packets left standing), and how late the rooms' ticks ran (their timers
 * fire late when the worker waits for a core or is busy with other rooms). And the time the
 * mixes themselves took, apart from the sockets' work around them.
 */

/** Width of a bucket; the last bucket holds everything from MAX_DELAY_MS on. */
export const DELAY_BUCKET_MS = 0.25;
export const MAX_DELAY_MS = 100;
const BUCKETS = MAX_DELAY_MS / DELAY_BUCKET_MS + 1;

/** Histograms: bucket i counts i × DELAY_BUCKET_MS up to the next. */
export interface MixingFigures {
  /** Each frame's wait, arrival to mix. */
  readonly delays: number[];
  /** Of those frames, how many were queued behind another frame of their member. */
  readonly behind: number;
  /** How late each room tick ran after its time. */
  readonly lateness: number[];
  /** Milliseconds spent in the mixes (mixer.ts `mix`: the sums, talk detection, each member's frame). */
  readonly mixMs: number;
}

const histogram = () => new Array<number>(BUCKETS).fill(0);
const count = (counts: number[], ms: number) => {
  counts[Math.min(BUCKETS - 1, Math.max(0, Math.floor(ms / DELAY_BUCKET_MS)))]!++;
};

export class MixingDelays {
  private delays = histogram();
  private behind = 0;
  private lateness = histogram();
  private mixMs = 0;

  record(ms: number, behind = false): void {
    count(this.delays, ms);
    if (behind) this.behind++;
  }

  recordLateness(ms: number): void {
    count(this.lateness, ms);
  }

  recordMix(ms: number): void {
    this.mixMs += ms;
  }

  /** The figures since the last take, and a fresh start. */
  take(): MixingFigures {
    const figures = { delays: this.delays, behind: this.behind, lateness: this.lateness, mixMs: this.mixMs };
    this.delays = histogram();
    this.behind = 0;
    this.lateness = histogram();
    this.mixMs = 0;
    return figures;
  }
}

/** The delay that a share `q` (0..1) of the counted frames stayed under: a bucket's upper edge. */
export function delayQuantile(counts: readonly number[], q: number): number | undefined {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return undefined;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= q * total) return Math.min(MAX_DELAY_MS, (i + 1) * DELAY_BUCKET_MS);
  }
  return MAX_DELAY_MS;
}
