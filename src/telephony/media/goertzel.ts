/**
 * The Goertzel algorithm (one DFT bin): the power of one frequency in a block of samples.
 * Used to check tones and DTMF in what a peer sent, and by tests that check audio.
 */

/** Power of `frequency` in `samples`, normalised so a full-scale sine gives about 0.25. */
export function goertzelPower(samples: ArrayLike<number>, sampleRate: number, frequency: number): number {
  const n = samples.length;
  if (n === 0) return 0;
  const coefficient = 2 * Math.cos((2 * Math.PI * frequency) / sampleRate);
  let previous = 0;
  let previous2 = 0;
  for (let i = 0; i < n; i++) {
    const value = samples[i]! + coefficient * previous - previous2;
    previous2 = previous;
    previous = value;
  }
  const power = previous2 * previous2 + previous * previous - coefficient * previous * previous2;
  return power / (n * n);
}

/** The strongest of `candidates` in each window of `windowMs`, with its share of the window's energy. */
export function dominantFrequencies(
  samples: ArrayLike<number>,
  sampleRate: number,
  candidates: number[],
  windowMs = 30,
): { frequency: number; share: number; rms: number }[] {
  const size = Math.round((sampleRate * windowMs) / 1000);
  const out: { frequency: number; share: number; rms: number }[] = [];
  for (let start = 0; start + size <= samples.length; start += size) {
    const window = Array.prototype.slice.call(samples, start, start + size) as number[];
    let energy = 0;
    for (const value of window) energy += value * value;
    const meanSquare = energy / size;
    let best = { frequency: 0, share: 0, rms: Math.sqrt(meanSquare) };
    for (const frequency of candidates) {
      // A sine of amplitude A has mean square A²/2 and Goertzel power A²/4.
      const share = meanSquare > 0 ? (2 * goertzelPower(window, sampleRate, frequency)) / meanSquare : 0;
      if (share > best.share) best = { frequency, share, rms: best.rms };
    }
    out.push(best);
  }
  return out;
}
