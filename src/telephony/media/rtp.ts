/**
 * RTP packets (RFC 3550 section 5.1 fixed header; 5.3.1 header extension and padding skipped on
 * receive). Only what a G.711 endpoint needs: version 2, no CSRC written.
 */

export interface RtpPacket {
  payloadType: number;
  marker: boolean;
  sequence: number;
  timestamp: number;
  ssrc: number;
  payload: Uint8Array;
}

/** Parses a datagram; undefined for anything that is not RTP version 2 (or is RTCP). */
export function parseRtp(data: Uint8Array): RtpPacket | undefined {
  if (data.length < 12 || data[0]! >> 6 !== 2) return undefined;
  const payloadType = data[1]! & 0x7f;
  // RTCP shares the port when rtcp-mux is used (RFC 5761 4): types 64..95 are not media.
  if (payloadType >= 64 && payloadType <= 95) return undefined;
  const csrcCount = data[0]! & 0x0f;
  let offset = 12 + csrcCount * 4;
  if (data[0]! & 0x10) {
    if (data.length < offset + 4) return undefined;
    offset += 4 + ((data[offset + 2]! << 8) | data[offset + 3]!) * 4;
  }
  let end = data.length;
  if (data[0]! & 0x20) end -= data[data.length - 1]!;
  if (offset > end) return undefined;
  // Bytes read directly: a DataView per packet was a measurable share of the media worker's time.
  return {
    payloadType,
    marker: (data[1]! & 0x80) !== 0,
    sequence: (data[2]! << 8) | data[3]!,
    timestamp: uint32(data, 4),
    ssrc: uint32(data, 8),
    payload: data.subarray(offset, end),
  };
}

/** Writes a 12-byte header into `out`. */
export function writeRtpHeader(
  out: Uint8Array,
  payloadType: number,
  marker: boolean,
  sequence: number,
  timestamp: number,
  ssrc: number,
): void {
  out[0] = 0x80;
  out[1] = (marker ? 0x80 : 0) | (payloadType & 0x7f);
  out[2] = (sequence >>> 8) & 0xff;
  out[3] = sequence & 0xff;
  putUint32(out, 4, timestamp);
  putUint32(out, 8, ssrc);
}

/** Big-endian 32-bit unsigned at `offset` (network order). */
function uint32(data: Uint8Array, offset: number): number {
  return (
    ((data[offset]! << 24) | (data[offset + 1]! << 16) | (data[offset + 2]! << 8) | data[offset + 3]!) >>> 0
  );
}

function putUint32(out: Uint8Array, offset: number, value: number): void {
  out[offset] = (value >>> 24) & 0xff;
  out[offset + 1] = (value >>> 16) & 0xff;
  out[offset + 2] = (value >>> 8) & 0xff;
  out[offset + 3] = value & 0xff;
}
