/**
 * The conference mixer's own delay (docs/decisions.md "Conferences", the room's clock): how long
 * each member's frame waited in the media worker, from the arrival of the packet that completed
 * it to the mix that carried it to the others (mixer.ts `delay`). A histogram, so that counting
 * 25,000 frames a second keeps no list; the worker keeps one for all its rooms.
 */

/** Width of a bucket; the last bucket holds everything from MAX_DELAY_MS on. */
export const DELAY_BUCKET_MS = 0.25;
export const MAX_DELAY_MS = 100;
const BUCKETS = MAX_DELAY_MS / DELAY_BUCKET_MS + 1;

export class MixingDelays {
  private counts = new Array<number>(BUCKETS).fill(0);

  record(ms: number): void {
    this.counts[Math.min(BUCKETS - 1, Math.max(0, Math.floor(ms / DELAY_BUCKET_MS)))]!++;
  }

  /** The counts since the last take (bucket i: i × DELAY_BUCKET_MS up to the next), and a fresh start. */
  take(): number[] {
    const counts = this.counts;
    this.counts = new Array<number>(BUCKETS).fill(0);
    return counts;
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
