/**
 * When in the 20 ms a conference room mixes (docs/decisions.md "Conferences", the room's clock).
 * A frame waits in the mixer from its arrival to the room's next tick, so a room that ticks at a
 * fixed phase makes its members wait 0–20 ms, whatever their phones do. Each member's frames
 * arrive at a phase of its own (its phone's send clock, plus the network's jitter); the room
 * ticks just after the latest arrival before the largest gap between them, so the longest wait
 * in the room is 20 ms less that gap (FreeSWITCH and Asterisk tick at a fixed phase). Pure:
 * media-room.ts measures the arrivals and moves its clock.
 */
import { FRAME_MS } from './clock.js';

/** Arrivals of one member in the window that decide the phase; fewer and it is left out. */
export const MIN_ARRIVALS = 25;
/** A frame is waited for this long after its member's late edge (the timer fires after it too). */
export const PHASE_MARGIN_MS = 1;
/** The share of a member's arrivals the room waits for: the rest are late, and wait a frame. */
const LATE_QUANTILE = 0.95;

/** `value` on the 20 ms circle, in [0, 20). */
export function phaseOf(value: number): number {
  const phase = value % FRAME_MS;
  return phase < 0 ? phase + FRAME_MS : phase;
}

/** The signed distance from phase `from` to phase `to`, in [−10, 10). */
export function phaseDistance(from: number, to: number): number {
  return phaseOf(to - from + FRAME_MS / 2) - FRAME_MS / 2;
}

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

/**
 * The phase the room should tick at: PHASE_MARGIN_MS after the late edge that ends the largest
 * gap-free run, i.e. before the largest gap between members' late edges. Undefined when no
 * member sends steadily enough to say.
 */
export function roomPhase(members: readonly (readonly number[])[]): number | undefined {
  const edges = members
    .map(lateEdge)
    .filter((edge): edge is number => edge !== undefined)
    .sort((a, b) => a - b);
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
