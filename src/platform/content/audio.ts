/**
 * The telephony form of audio (decisions.md "Content and conversion": announcements are stored
 * 8 kHz mono): band-limited resampling, silence detection (status `empty` means only silence,
 * spec "Recording") and 16-bit quantisation.
 */

export const TELEPHONY_RATE = 8000;

const ZERO_CROSSINGS = 16;
const TABLE_STEPS = 512;
const KAISER_BETA = 8.6;

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

let kernel: Float32Array | undefined;

/** sinc(t) times a Kaiser window, sampled at TABLE_STEPS points per zero crossing. */
function sincTable(): Float32Array {
  if (kernel) return kernel;
  const size = ZERO_CROSSINGS * TABLE_STEPS + 2;
  kernel = new Float32Array(size);
  const norm = besselI0(KAISER_BETA);
  for (let i = 0; i < size; i++) {
    const t = i / TABLE_STEPS;
    const sinc = i === 0 ? 1 : Math.sin(Math.PI * t) / (Math.PI * t);
    const r = t / ZERO_CROSSINGS;
    const window = r >= 1 ? 0 : besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / norm;
    kernel[i] = sinc * window;
  }
  return kernel;
}

/**
 * Windowed-sinc resampling. When reducing the rate the filter cuts off just below the new
 * Nyquist frequency, so that nothing above 4 kHz folds back into the telephony band.
 */
export function resample(input: Float32Array, fromRate: number, toRate: number): Float32Array {
  if (fromRate === toRate) return input.slice();
  const table = sincTable();
  const ratio = toRate / fromRate;
  const cutoff = Math.min(1, ratio) * 0.95;
  const halfWidth = ZERO_CROSSINGS / cutoff;
  const steps = cutoff * TABLE_STEPS;
  const length = Math.floor((input.length * toRate) / fromRate);
  const out = new Float32Array(length);
  const last = input.length - 1;
  for (let n = 0; n < length; n++) {
    const center = n / ratio;
    const first = Math.max(0, Math.ceil(center - halfWidth));
    const end = Math.min(last, Math.floor(center + halfWidth));
    let sum = 0;
    for (let i = first; i <= end; i++) {
      const position = Math.abs(center - i) * steps;
      const index = position | 0;
      const fraction = position - index;
      const a = table[index]!;
      sum += input[i]! * (a + (table[index + 1]! - a) * fraction);
    }
    out[n] = sum * cutoff;
  }
  return out;
}

/** Loudest 20 ms frame (RMS without its DC part) below about -50 dBFS counts as silence. */
const SILENCE_RMS = 0.003;

export function isSilent(samples: Float32Array, sampleRate: number): boolean {
  const frame = Math.max(1, Math.round(sampleRate / 50));
  for (let start = 0; start < samples.length; start += frame) {
    const end = Math.min(samples.length, start + frame);
    let sum = 0;
    let squares = 0;
    for (let i = start; i < end; i++) {
      sum += samples[i]!;
      squares += samples[i]! * samples[i]!;
    }
    const count = end - start;
    const mean = sum / count;
    if (Math.sqrt(Math.max(0, squares / count - mean * mean)) >= SILENCE_RMS) return false;
  }
  return true;
}

export function toInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const value = Math.round(samples[i]! * 32767);
    out[i] = Math.min(32767, Math.max(-32768, value));
  }
  return out;
}

export function fromInt16(samples: Int16Array): Float32Array {
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = samples[i]! / 32768;
  return out;
}
