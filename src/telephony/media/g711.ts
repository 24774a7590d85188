/**
 * G.711 (ITU-T G.711) µ-law and A-law by table lookup: 256-entry decode tables and 64 K-entry
 * encode tables indexed by the 16-bit sample, built once on first use (RFC 3551 4.5.14 PCMU
 * and PCMA, payload types 0 and 8).
 */
import { alawToLinear, mulawToLinear } from '../../platform/content/wav.js';

function mulawEncode(sample: number): number {
  const BIAS = 0x84;
  const sign = sample < 0 ? 0x80 : 0;
  let magnitude = Math.min(Math.abs(sample), 32635) + BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 15;
  magnitude = sign | (exponent << 4) | mantissa;
  return ~magnitude & 0xff;
}

function alawEncode(sample: number): number {
  const sign = sample >= 0 ? 0x80 : 0;
  const magnitude = Math.min(sample >= 0 ? sample : -sample - 1, 32767);
  let out: number;
  if (magnitude < 256) out = magnitude >> 4;
  else {
    let exponent = 1;
    while (exponent < 7 && magnitude >= 256 << exponent) exponent++;
    out = (exponent << 4) | ((magnitude >> (exponent + 3)) & 15);
  }
  return (out | sign) ^ 0x55;
}

interface Tables {
  decode: [Int16Array, Int16Array];
  encode: [Uint8Array, Uint8Array];
}

let tables: Tables | undefined;

function build(): Tables {
  const decode: [Int16Array, Int16Array] = [new Int16Array(256), new Int16Array(256)];
  for (let i = 0; i < 256; i++) {
    decode[0][i] = mulawToLinear(i);
    decode[1][i] = alawToLinear(i);
  }
  const encode: [Uint8Array, Uint8Array] = [new Uint8Array(65536), new Uint8Array(65536)];
  for (let i = 0; i < 65536; i++) {
    const sample = i - 32768;
    encode[0][i] = mulawEncode(sample);
    encode[1][i] = alawEncode(sample);
  }
  return { decode, encode };
}

/** Payload type 0 (PCMU) or 8 (PCMA). */
export type G711Type = 0 | 8;

export function encodeG711(samples: Int16Array, payloadType: G711Type, out: Uint8Array): void {
  tables ??= build();
  const table = tables.encode[payloadType === 0 ? 0 : 1];
  for (let i = 0; i < samples.length; i++) out[i] = table[samples[i]! + 32768]!;
}

export function decodeG711(payload: Uint8Array, payloadType: G711Type, out: Int16Array): void {
  tables ??= build();
  const table = tables.decode[payloadType === 0 ? 0 : 1];
  for (let i = 0; i < payload.length; i++) out[i] = table[payload[i]!]!;
}
