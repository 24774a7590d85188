/**
 * When in the 20 ms a conference room mixes (docs/decisions.md "Conferences", the room's clock).
 * A frame waits in the mixer from its arrival to the room's next tick, so a room that ticks at a
 * fixed phase makes its members wait 0–20 ms, whatever their phones do. Each member's frames
 * arrive at a phase of its own (its phone's send clock, plus the network's jitter); the room
 * ticks just after the latest arrival before the largest gap between them, so the longest wait
 * in the room is 20 ms less that gap (FreeSWITCH and Asterisk tick at a fixed phase). Pure:
 * media-room.ts measures the arrivals and moves its clock.
 */
import { FRAME_MS, phaseDistance, phaseOf } from './clock.js';

/** Arrivals of one member in the window that decide the phase; fewer and it is left out. */
export const MIN_ARRIVALS = 25;
/**
 * How long after the late edge the room ticks. None: a frame due and not yet in at the tick is
 * waited for anyway (LATE_WAIT_MS, media-room.ts), and the timer fires after its time too. With
 * 1 ms (until 2026-12-06) the mixer's delay was about 0.5 ms longer at p50 and p99 on the bench.
 */
export const PHASE_MARGIN_MS = 0;
/** The share of a member's arrivals the room waits for: the rest are late, and wait a frame. */
const LATE_QUANTILE = 0.95;

/**
 * The late edge of one member's arrivals: their circular mean moved on by the deviation that
 * LATE_QUANTILE of them stay under (its jitter), or undefined with fewer than MIN_ARRIVALS.
 */
export function lateEdge(phases: readonly number[]): number | undefined {
  if (phases.length < MIN_ARRIVALS) return undefined;
  let x = 0;
  let y = 0;
  for (const phase of phases) {
    const angle = (phase / FRAME_MS) * 2 * Math.PI;
    x += Math.cos(angle);
    y += Math.sin(angle);
  }
  const mean = phaseOf((Math.atan2(y, x) / (2 * Math.PI)) * FRAME_MS);
  const deviations = phases.map((phase) => phaseDistance(mean, phase)).sort((a, b) => a - b);
  const late = deviations[Math.min(deviations.length - 1, Math.floor(deviations.length * LATE_QUANTILE))]!;
  return phaseOf(mean + Math.max(0, late));
}

/** The members' late edges (those who sent at least MIN_ARRIVALS), in order. */
export function lateEdges(members: readonly (readonly number[])[]): number[] {
  return members
    .map(lateEdge)
    .filter((edge): edge is number => edge !== undefined)
    .sort((a, b) => a - b);
}

/** The longest a frame at one of the late `edges` waits for a tick at `phase`. */
export function longestWait(edges: readonly number[], phase: number): number {
  let longest = 0;
  for (const edge of edges) longest = Math.max(longest, phaseOf(phase - edge));
  return longest;
}

/**
 * The phase the room should tick at: PHASE_MARGIN_MS after the late edge that comes before the
 * largest gap between the sorted late `edges`. Undefined without edges.
 */
export function bestPhase(edges: readonly number[]): number | undefined {
  if (edges.length === 0) return undefined;
  let before = edges[edges.length - 1]!;
  let largest = -1;
  for (let i = 0; i < edges.length; i++) {
    // The gap from edges[i-1] (wrapping) to edges[i].
    const previous = edges[(i + edges.length - 1) % edges.length]!;
    const gap = phaseOf(edges[i]! - previous) || (edges.length === 1 ? FRAME_MS : 0);
    if (gap > largest) {
      largest = gap;
      before = previous;
    }
  }
  return phaseOf(before + PHASE_MARGIN_MS);
}

/** How long after its tick the room waits for a frame due and not in yet. */
export const LATE_WAIT_MS = 4;
/** A member whose last frame is older than this does not send steadily (hold, silence suppression): not waited for. */
export const STEADY_MS = 60;

/**
 * Whether the room should wait before mixing for this member: it sends steadily and its next
 * frame is due by `deadline` (its last arrival plus a frame), none queued. Late by a millisecond
 * or two of jitter, that frame would otherwise miss the mix and stand a whole frame in the queue.
 */
export function frameDue(now: number, deadline: number, lastArrival: number, queued: boolean): boolean {
  return !queued && now - lastArrival <= STEADY_MS && lastArrival + FRAME_MS <= deadline;
}
