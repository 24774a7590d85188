/**
 * What the synthetic conference members of `npm run bench:conference` send (bench/conference-members.ts
 * in Node, bench/conference-peers.c in C): each talks all the time, a quiet tone of its own (so the
 * mixer's talk detection counts it in: the mixer's worst case, every member with a mix of its
 * own), a second of it looping, and once a second one loud frame (a burst) whose hearing by the
 * others of its room gives the delay.
 */
import { encodeG711 } from '../src/telephony/media/g711.js';

export const FRAME = 160;
/** Ticks (20 ms) per burst cycle: each member bursts once a second. */
export const CYCLE = 50;
/**
 * A decoded frame whose mean magnitude is above this is a burst (a burst sine: about 5,100; the
 * quiet voices of nine others together well under 1,000).
 */
export const LOUD = 2500;
/** Distinct quiet voices: a member's is that of its position in its room, modulo this. */
export const VOICES = 10;
const QUIET = 400;

const voices = new Map<number, Uint8Array[]>();
/** The CYCLE frames (PCMU) of the quiet voice of a member at `position` in its room. */
export function voice(position: number): Uint8Array[] {
  const hz = 300 + 70 * (position % VOICES);
  let frames = voices.get(hz);
  if (!frames) {
    frames = Array.from({ length: CYCLE }, (_, f) => {
      const pcm = new Int16Array(FRAME);
      for (let i = 0; i < FRAME; i++)
        pcm[i] = Math.round(QUIET * Math.sin((2 * Math.PI * hz * (f * FRAME + i)) / 8000));
      const out = new Uint8Array(FRAME);
      encodeG711(pcm, 0, out);
      return out;
    });
    voices.set(hz, frames);
  }
  return frames;
}

/** The tick of the burst cycle at which the member at `position` of a group of `size` bursts: turns taken evenly. */
export function burstSlot(position: number, size: number): number {
  return Math.floor((position * CYCLE) / size);
}

/** The burst: a loud 1 kHz frame (PCMU). */
export const loudFrame = (() => {
  const pcm = new Int16Array(FRAME);
  for (let i = 0; i < FRAME; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 8000));
  const out = new Uint8Array(FRAME);
  encodeG711(pcm, 0, out);
  return out;
})();

/**
 * Each member's send phase, as an index of `phases` in the 20 ms: 'fixed', five phases 4 ms apart
 * by member index (the runs before 2026-12-05 20:00 UTC; every room then has the same five, so all
 * rooms' arrivals coincide); 'random', a phase of its own for each member, at 1 ms steps, as
 * phones' clocks are.
 */
export type SendPhases = 'fixed' | 'random';
export function phaseIndexes(count: number, sendPhases: SendPhases, random: () => number) {
  const phases = sendPhases === 'fixed' ? 5 : 20;
  return {
    phases,
    indexes: Array.from({ length: count }, (_, i) =>
      sendPhases === 'fixed' ? i % phases : Math.floor(random() * phases),
    ),
  };
}
