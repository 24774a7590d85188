/**
 * PNG of a 1-bit fax page (spec "Fax": GET /api/fax/{uuid}/{page}/{xxx}.png). The page stays
 * 1 bit deep, so the PNG is small and needs no image library: rows are stored unfiltered and
 * deflated; pHYs carries the fax resolution so viewers can show the page at its true aspect.
 */
import zlib from 'node:zlib';
import type { Bitmap } from './bitmap.js';

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

function chunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(body, 8);
  view.setUint32(8 + body.length, zlib.crc32(out.subarray(4, 8 + body.length)));
  return out;
}

/** A greyscale PNG of bit depth 1 (0 = black in PNG, so bits are inverted). */
export function encodeBitmapPng(bitmap: Bitmap, xDpi: number, yDpi: number): Buffer {
  const { width, height, stride, data } = bitmap;
  const raw = new Uint8Array((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    const target = y * (stride + 1);
    // Filter byte 0 (none) is already there.
    for (let i = 0; i < stride; i++) raw[target + 1 + i] = ~data[y * stride + i]! & 0xff;
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const physical = new Uint8Array(9);
  const phys = new DataView(physical.buffer);
  phys.setUint32(0, Math.round(xDpi / 0.0254));
  phys.setUint32(4, Math.round(yDpi / 0.0254));
  physical[8] = 1; // unit: metre
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('pHYs', physical),
    chunk('IDAT', zlib.deflateSync(raw, { level: 6 })),
    chunk('IEND', new Uint8Array(0)),
  ]);
}
