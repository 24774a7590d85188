/**
 * WAV reading and writing for announcements and recordings (spec "Announcement": WAV upload and
 * download). Reads PCM (8, 16, 24, 32 bit), IEEE float, A-law and mu-law in any chunk order;
 * writes 16-bit PCM. A header that contradicts itself or the file is malformed; a data size of
 * 0xFFFFFFFF (written by streaming recorders that cannot seek back) means "up to the end".
 */
import { MalformedContentError } from './errors.js';

export interface DecodedAudio {
  readonly sampleRate: number;
  /** Mono samples in -1..1 (channels are mixed down). */
  readonly samples: Float32Array;
}

const PCM = 1;
const FLOAT = 3;
const ALAW = 6;
const MULAW = 7;
const EXTENSIBLE = 0xfffe;

function fourCC(data: Uint8Array, at: number): string {
  return String.fromCharCode(data[at]!, data[at + 1]!, data[at + 2]!, data[at + 3]!);
}

/** One G.711 A-law byte as a 16-bit sample (also the telephony media's decode table). */
export function alawToLinear(value: number): number {
  const a = value ^ 0x55;
  const exponent = (a >> 4) & 7;
  const mantissa = a & 15;
  const magnitude = exponent === 0 ? (mantissa << 4) + 8 : ((mantissa << 4) + 0x108) << (exponent - 1);
  return a & 0x80 ? magnitude : -magnitude;
}

/** One G.711 µ-law byte as a 16-bit sample. */
export function mulawToLinear(value: number): number {
  const u = ~value & 0xff;
  const exponent = (u >> 4) & 7;
  const magnitude = ((((u & 15) << 3) + 0x84) << exponent) - 0x84;
  return u & 0x80 ? -magnitude : magnitude;
}

function table(decode: (value: number) => number): Float32Array {
  const out = new Float32Array(256);
  for (let i = 0; i < 256; i++) out[i] = decode(i) / 32768;
  return out;
}

let companding: { alaw: Float32Array; mulaw: Float32Array } | undefined;

interface Format {
  readonly tag: number;
  readonly channels: number;
  readonly sampleRate: number;
  readonly blockAlign: number;
  readonly bits: number;
}

function readFormat(view: DataView, at: number, size: number): Format {
  if (size < 16) throw new MalformedContentError('fmt chunk too short');
  let tag = view.getUint16(at, true);
  const channels = view.getUint16(at + 2, true);
  const sampleRate = view.getUint32(at + 4, true);
  const blockAlign = view.getUint16(at + 12, true);
  const bits = view.getUint16(at + 14, true);
  if (tag === EXTENSIBLE) {
    if (size < 40) throw new MalformedContentError('extensible fmt chunk too short');
    tag = view.getUint16(at + 24, true);
  }
  if (channels < 1 || channels > 8) throw new MalformedContentError(`unsupported channel count ${channels}`);
  if (sampleRate < 1000 || sampleRate > 384_000)
    throw new MalformedContentError(`implausible sample rate ${sampleRate}`);
  const valid =
    (tag === PCM && [8, 16, 24, 32].includes(bits)) ||
    (tag === FLOAT && (bits === 32 || bits === 64)) ||
    ((tag === ALAW || tag === MULAW) && bits === 8);
  if (!valid) throw new MalformedContentError(`unsupported WAV format ${tag}/${bits} bits`);
  if (blockAlign !== channels * (bits / 8))
    throw new MalformedContentError('block size contradicts the format');
  return { tag, channels, sampleRate, blockAlign, bits };
}

/** Parses a WAV file into mono samples; throws MalformedContentError. */
export function parseWav(data: Uint8Array): DecodedAudio {
  if (data.length < 12 || fourCC(data, 0) !== 'RIFF' || fourCC(data, 8) !== 'WAVE') {
    throw new MalformedContentError('not a WAV file');
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let format: Format | undefined;
  let body: Uint8Array | undefined;
  let at = 12;
  while (at + 8 <= data.length) {
    const id = fourCC(data, at);
    const declared = view.getUint32(at + 4, true);
    const start = at + 8;
    if (id === 'data') {
      const size = declared === 0xffffffff ? data.length - start : declared;
      if (start + size > data.length) throw new MalformedContentError('data chunk longer than the file');
      body = data.subarray(start, start + size);
    } else if (start + declared > data.length) {
      throw new MalformedContentError(`${id.trim() || 'chunk'} longer than the file`);
    } else if (id === 'fmt ') {
      format = readFormat(view, start, declared);
    }
    if (declared === 0xffffffff) break;
    at = start + declared + (declared & 1);
  }
  if (!format) throw new MalformedContentError('no fmt chunk');
  if (!body) throw new MalformedContentError('no data chunk');
  return { sampleRate: format.sampleRate, samples: decodeSamples(body, format) };
}

function decodeSamples(body: Uint8Array, format: Format): Float32Array {
  const frames = Math.floor(body.length / format.blockAlign);
  const { channels, bits, tag } = format;
  const out = new Float32Array(frames);
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const bytes = bits / 8;
  companding ??= { alaw: table(alawToLinear), mulaw: table(mulawToLinear) };
  const lookup = tag === ALAW ? companding.alaw : companding.mulaw;
  for (let frame = 0; frame < frames; frame++) {
    let sum = 0;
    for (let channel = 0; channel < channels; channel++) {
      const p = frame * format.blockAlign + channel * bytes;
      let value: number;
      if (tag === ALAW || tag === MULAW) value = lookup[body[p]!]!;
      else if (tag === FLOAT) value = bits === 32 ? view.getFloat32(p, true) : view.getFloat64(p, true);
      else if (bits === 8) value = (body[p]! - 128) / 128;
      else if (bits === 16) value = view.getInt16(p, true) / 32768;
      else if (bits === 24)
        value = ((body[p + 2]! << 24) | (body[p + 1]! << 16) | (body[p]! << 8)) / 2147483648;
      else value = view.getInt32(p, true) / 2147483648;
      sum += Number.isFinite(value) ? value : 0;
    }
    out[frame] = sum / channels;
  }
  return out;
}

/** 16-bit PCM samples as a WAV file. */
export function writeWav(samples: Int16Array, sampleRate: number): Uint8Array {
  const out = new Uint8Array(44 + samples.length * 2);
  const view = new DataView(out.buffer);
  const text = (at: number, value: string) => {
    for (let i = 0; i < 4; i++) out[at + i] = value.charCodeAt(i);
  };
  text(0, 'RIFF');
  view.setUint32(4, 36 + samples.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, PCM, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) view.setInt16(44 + i * 2, samples[i]!, true);
  return out;
}
