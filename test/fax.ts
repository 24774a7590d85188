/**
 * Fax pages for the fax tests: text-like bitmaps, a 2-page TIFF-F of them as the content path
 * stores a fax, and how much of a sent page a received one shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Bitmap, createBitmap, getPixel, setPixel } from '../src/platform/content/bitmap.js';
import { encodeG4 } from '../src/platform/content/ccitt-g4.js';
import { writeTiff } from '../src/platform/content/tiff.js';

export const WIDTH = 1728;
export const HEIGHT = 1100;
export function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

/** A text-like page: blocks of "words" below a white top margin (where the header goes). */
export function page(seed: number): Bitmap {
  const bitmap = createBitmap(WIDTH, HEIGHT);
  const next = random(seed);
  for (let line = 80; line + 20 < HEIGHT; line += 28) {
    let x = 100;
    while (x < WIDTH - 200) {
      const word = 20 + Math.floor(next() * 120);
      for (let y = line; y < line + 14; y++)
        for (let dx = 0; dx < word; dx++) setPixel(bitmap, x + dx, y, true);
      x += word + 15;
    }
  }
  return bitmap;
}

export function blackIn(bitmap: Bitmap, rows: [number, number]): number {
  let count = 0;
  for (let y = rows[0]; y < rows[1]; y++)
    for (let x = 0; x < bitmap.width; x++) count += getPixel(bitmap, x, y);
  return count;
}

/** Share of the sent page's black pixels that are black in the received one (bottom-aligned). */
export function overlap(sent: Bitmap, received: Bitmap): number {
  const shift = received.height - sent.height;
  let black = 0;
  let both = 0;
  for (let y = 0; y < sent.height; y++)
    for (let x = 0; x < sent.width; x++)
      if (getPixel(sent, x, y)) {
        black++;
        both += getPixel(received, x, y + shift);
      }
  return both / black;
}

/** Pages 1 and 2 written as a 2-page TIFF-F (G4, 204 × 196 dpi) in `dir`: what a sender sends. */
export function twoPageFax(dir: string): { sent: Bitmap[]; txFile: string } {
  const sent = [page(1), page(2)];
  const txFile = path.join(dir, 'tx.tif');
  fs.writeFileSync(
    txFile,
    writeTiff(
      sent.map((bitmap) => ({ width: WIDTH, height: HEIGHT, xRes: 204, yRes: 196, g4: encodeG4(bitmap) })),
    ),
  );
  return { sent, txFile };
}
