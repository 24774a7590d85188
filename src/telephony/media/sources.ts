/**
 * What a media endpoint plays, one 20 ms frame (160 samples at 8 kHz) at a time: tones with a
 * cadence (the ring tone is 425 Hz, 1 s on, 4 s off), stored 8 kHz mono PCM (announcements),
 * and the mix of two sources (the spec's `mix`: an announcement over the ring tone).
 */

import { resample, TELEPHONY_RATE, toInt16 } from '../../platform/content/audio.js';
import { parseWav } from '../../platform/content/wav.js';

export const SAMPLE_RATE = TELEPHONY_RATE;
export const FRAME_SAMPLES = 160;

export interface AudioSource {
  /** Fills `frame` (160 samples); false when the source has ended (the frame is then unused). */
  read(frame: Int16Array): boolean;
  /**
   * The frame just read, already encoded in `payloadType`'s law when the source shares one
   * encoding among several endpoints (a conference's common mix); undefined: encode it.
   */
  encoded?(payloadType: 0 | 8): Uint8Array | undefined;
}

export interface ToneOptions {
  /** Milliseconds on and off; default continuous. */
  onMs?: number;
  offMs?: number;
  /** Total length; default endless. */
  durationMs?: number;
  /** Peak amplitude 0..1; default 0.3 (about -10 dBFS). */
  amplitude?: number;
}

export class ToneSource implements AudioSource {
  private sample = 0;
  private readonly step: number;
  private readonly amplitude: number;
  private readonly period: number;
  private readonly on: number;
  private readonly total: number;

  constructor(
    readonly frequency: number,
    readonly options: ToneOptions = {},
  ) {
    this.step = (2 * Math.PI * frequency) / SAMPLE_RATE;
    this.amplitude = Math.round(32767 * Math.min(1, Math.max(0, options.amplitude ?? 0.3)));
    this.on = options.onMs === undefined ? Number.POSITIVE_INFINITY : (options.onMs * SAMPLE_RATE) / 1000;
    this.period = this.on + ((options.offMs ?? 0) * SAMPLE_RATE) / 1000;
    this.total =
      options.durationMs === undefined ? Number.POSITIVE_INFINITY : (options.durationMs * SAMPLE_RATE) / 1000;
  }

  read(frame: Int16Array): boolean {
    if (this.sample >= this.total) return false;
    for (let i = 0; i < frame.length; i++) {
      const n = this.sample + i;
      const inCadence = Number.isFinite(this.period) ? n % this.period : n;
      frame[i] =
        n < this.total && inCadence < this.on ? Math.round(this.amplitude * Math.sin(this.step * n)) : 0;
    }
    this.sample += frame.length;
    return true;
  }
}

/** The German/European ring tone (ITU-T E.180): 425 Hz, 1 s on, 4 s off. */
export function ringTone(): ToneSource {
  return new ToneSource(425, { onMs: 1000, offMs: 4000 });
}

/** 8 kHz mono 16-bit samples, played once or looped. */
export class PcmSource implements AudioSource {
  private position = 0;

  constructor(
    readonly samples: Int16Array,
    readonly loop = false,
  ) {}

  read(frame: Int16Array): boolean {
    if (this.position >= this.samples.length) {
      if (!this.loop || this.samples.length === 0) return false;
      this.position = 0;
    }
    const end = Math.min(this.samples.length, this.position + frame.length);
    frame.set(this.samples.subarray(this.position, end));
    frame.fill(0, end - this.position);
    this.position = end;
    return true;
  }
}

/**
 * Audio another endpoint received, played as it arrives (the relay of a call Zentrale answered
 * itself): a short queue, silence while it is empty, the oldest dropped beyond `maxSamples`.
 */
export class QueueSource implements AudioSource {
  private queue = new Int16Array(0);

  constructor(private readonly maxSamples = SAMPLE_RATE / 5) {}

  push(samples: Int16Array): void {
    const next = new Int16Array(this.queue.length + samples.length);
    next.set(this.queue);
    next.set(samples, this.queue.length);
    this.queue = next.length > this.maxSamples ? next.slice(next.length - this.maxSamples) : next;
  }

  read(frame: Int16Array): boolean {
    const n = Math.min(frame.length, this.queue.length);
    frame.set(this.queue.subarray(0, n));
    frame.fill(0, n);
    this.queue = this.queue.slice(n);
    return true;
  }
}

/** Decodes a WAV file (announcements are stored 8 kHz mono) into playable samples. */
export function pcmFromWav(data: Uint8Array): Int16Array {
  const audio = parseWav(data);
  const samples =
    audio.sampleRate === SAMPLE_RATE ? audio.samples : resample(audio.samples, audio.sampleRate, SAMPLE_RATE);
  return toInt16(samples);
}

/** The sum of two sources, clipped; ends when `primary` ends (the ring tone under it stops too). */
export class MixSource implements AudioSource {
  private readonly other = new Int16Array(FRAME_SAMPLES);
  private secondaryDone = false;

  constructor(
    readonly primary: AudioSource,
    readonly secondary: AudioSource,
  ) {}

  read(frame: Int16Array): boolean {
    if (!this.primary.read(frame)) return false;
    if (this.secondaryDone) return true;
    const other = this.other.length === frame.length ? this.other : new Int16Array(frame.length);
    if (!this.secondary.read(other)) {
      this.secondaryDone = true;
      return true;
    }
    for (let i = 0; i < frame.length; i++)
      frame[i] = Math.max(-32768, Math.min(32767, frame[i]! + other[i]!));
    return true;
  }
}

/**
 * A source as plain data, for an endpoint in the media worker (worker-engine.ts): what crosses
 * the thread boundary is the description, the worker builds the source again. PCM in a
 * SharedArrayBuffer is shared, not copied.
 */
export type SourceSpec =
  | { readonly kind: 'tone'; readonly frequency: number; readonly options: ToneOptions }
  | { readonly kind: 'pcm'; readonly samples: Int16Array; readonly loop: boolean }
  | { readonly kind: 'mix'; readonly primary: SourceSpec; readonly secondary: SourceSpec };

/** The description of a tone, PCM or mix source; undefined for any other (a relay's queue). */
export function sourceSpec(source: AudioSource): SourceSpec | undefined {
  if (source instanceof ToneSource)
    return { kind: 'tone', frequency: source.frequency, options: { ...source.options } };
  if (source instanceof PcmSource) return { kind: 'pcm', samples: source.samples, loop: source.loop };
  if (source instanceof MixSource) {
    const primary = sourceSpec(source.primary);
    const secondary = sourceSpec(source.secondary);
    return primary && secondary && { kind: 'mix', primary, secondary };
  }
  return undefined;
}

/** A fresh source from its description (each play starts at the beginning). */
export function sourceFromSpec(spec: SourceSpec): AudioSource {
  switch (spec.kind) {
    case 'tone':
      return new ToneSource(spec.frequency, spec.options);
    case 'pcm':
      return new PcmSource(spec.samples, spec.loop);
    case 'mix':
      return new MixSource(sourceFromSpec(spec.primary), sourceFromSpec(spec.secondary));
  }
}
