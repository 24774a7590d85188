/**
 * Ogg Vorbis for announcements and recordings (spec "Announcement": Ogg upload and download).
 * The container is checked here (page structure, checksums, a Vorbis stream, an end-of-stream
 * page, so that a cut-off upload is malformed); the codec is libvorbis compiled to WebAssembly:
 * `@wasm-audio-decoders/ogg-vorbis` decodes, `wasm-media-encoders` encodes.
 */
import { OggVorbisDecoder } from '@wasm-audio-decoders/ogg-vorbis';
import { createOggEncoder } from 'wasm-media-encoders';
import { MalformedContentError } from './errors.js';
import type { DecodedAudio } from './wav.js';

let crcTable: Uint32Array | undefined;

/** Ogg's CRC-32: polynomial 0x04c11db7, not reflected, initial value 0. */
function oggCrc(data: Uint8Array, start: number, end: number, skipFrom: number): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let r = i << 24;
      for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
      crcTable[i] = r >>> 0;
    }
  }
  let crc = 0;
  for (let i = start; i < end; i++) {
    // The checksum field itself counts as zero bytes.
    const byte = i >= skipFrom && i < skipFrom + 4 ? 0 : data[i]!;
    crc = ((crc << 8) ^ crcTable[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  }
  return crc;
}

/**
 * Checks that the file is a complete, undamaged Ogg Vorbis stream (throws MalformedContentError)
 * and answers its duration in seconds from the last page's granule position (what the file
 * claims; decodeOggVorbis bounds what it really holds).
 */
export function checkOggVorbis(data: Uint8Array): { duration: number } {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 0;
  let pages = 0;
  let lastFlags = 0;
  let sampleRate = 0;
  let granule = 0;
  while (at < data.length) {
    if (at + 27 > data.length) throw new MalformedContentError('truncated Ogg page');
    if (data[at] !== 0x4f || data[at + 1] !== 0x67 || data[at + 2] !== 0x67 || data[at + 3] !== 0x53) {
      throw new MalformedContentError(pages === 0 ? 'not an Ogg file' : 'damaged Ogg page');
    }
    if (data[at + 4] !== 0) throw new MalformedContentError('unknown Ogg version');
    const flags = data[at + 5]!;
    const segments = data[at + 26]!;
    if (at + 27 + segments > data.length) throw new MalformedContentError('truncated Ogg page');
    let bodySize = 0;
    for (let i = 0; i < segments; i++) bodySize += data[at + 27 + i]!;
    const end = at + 27 + segments + bodySize;
    if (end > data.length) throw new MalformedContentError('truncated Ogg page');
    if (oggCrc(data, at, end, at + 22) !== view.getUint32(at + 22, true)) {
      throw new MalformedContentError('Ogg checksum mismatch');
    }
    if (pages === 0) {
      const body = at + 27 + segments;
      const isVorbis =
        flags & 2 &&
        bodySize >= 7 &&
        data[body] === 1 &&
        String.fromCharCode(...data.subarray(body + 1, body + 7)) === 'vorbis';
      if (!isVorbis) throw new MalformedContentError('not an Ogg Vorbis stream');
      sampleRate = bodySize >= 16 ? view.getUint32(body + 12, true) : 0;
    }
    const position = view.getBigInt64(at + 6, true);
    if (position > 0n) granule = Number(position);
    lastFlags = flags;
    pages++;
    at = end;
  }
  if (pages === 0) throw new MalformedContentError('empty file');
  if (!(lastFlags & 4)) throw new MalformedContentError('Ogg stream ends without its last page');
  if (sampleRate < 1) throw new MalformedContentError('Vorbis stream without a sample rate');
  return { duration: granule / sampleRate };
}

/** Bytes handed to the decoder at a time, so that what it decodes can be bounded on the way. */
const DECODE_CHUNK = 64 * 1024;

/**
 * Decodes Ogg Vorbis to mono samples at the stream's own rate, in pieces: more than
 * `maxSeconds` of audio (whatever the header claims) stops it with AudioTooLongError before the
 * samples of an hours-long file fill the worker's memory.
 */
export async function decodeOggVorbis(
  data: Uint8Array,
  maxSeconds = Number.POSITIVE_INFINITY,
): Promise<DecodedAudio> {
  checkOggVorbis(data);
  const decoder = new OggVorbisDecoder();
  await decoder.ready;
  try {
    const parts: Float32Array[] = [];
    let frames = 0;
    let sampleRate = 0;
    const take = (decoded: Awaited<ReturnType<OggVorbisDecoder['decode']>>) => {
      if (decoded.errors.length > 0) {
        throw new MalformedContentError(`damaged Vorbis data: ${decoded.errors[0]?.message ?? ''}`);
      }
      if (decoded.samplesDecoded === 0) return;
      sampleRate = decoded.sampleRate;
      parts.push(mono(decoded.channelData, decoded.samplesDecoded));
      frames += decoded.samplesDecoded;
      if (frames > maxSeconds * sampleRate) throw new AudioTooLongError(maxSeconds);
    };
    for (let at = 0; at < data.length; at += DECODE_CHUNK)
      take(await decoder.decode(data.subarray(at, at + DECODE_CHUNK)));
    take(await decoder.flush());
    const samples = new Float32Array(frames);
    let at = 0;
    for (const part of parts) {
      samples.set(part, at);
      at += part.length;
    }
    return { sampleRate, samples };
  } finally {
    decoder.free();
  }
}

/** Decoded audio longer than the bound. */
export class AudioTooLongError extends Error {
  constructor(readonly seconds: number) {
    super(`audio longer than ${seconds} s`);
    this.name = 'AudioTooLongError';
  }
}

function mono(channels: Float32Array[], frames: number): Float32Array {
  const samples = new Float32Array(frames);
  if (channels.length === 1) samples.set(channels[0]!.subarray(0, frames));
  else if (channels.length > 1) {
    for (let i = 0; i < frames; i++) {
      let sum = 0;
      for (const channel of channels) sum += channel[i]!;
      samples[i] = sum / channels.length;
    }
  }
  return samples;
}

let encoder: Awaited<ReturnType<typeof createOggEncoder>> | undefined;

/** Vorbis quality: about 20 kbit/s for 8 kHz speech. */
export const VORBIS_QUALITY = 3;

/** Encodes mono samples as Ogg Vorbis. */
export async function encodeOggVorbis(samples: Float32Array, sampleRate: number): Promise<Uint8Array> {
  encoder ??= await createOggEncoder();
  encoder.configure({ channels: 1, sampleRate, vbrQuality: VORBIS_QUALITY });
  const parts: Uint8Array[] = [];
  let size = 0;
  const keep = (bytes: Uint8Array) => {
    // The encoder owns its output buffer: copy before the next call.
    if (bytes.length === 0) return;
    parts.push(bytes.slice());
    size += bytes.length;
  };
  const block = 8192;
  for (let at = 0; at < samples.length; at += block) keep(encoder.encode([samples.subarray(at, at + block)]));
  keep(encoder.finalize());
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
