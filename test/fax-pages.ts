/**
 * Fax test pages: text-like bitmaps to send and how much of a sent page's black
 * arrived, shared by the fax engine's tests in memory and over the network.
 */
import fs from 'node:fs';
import { type Bitmap, createBitmap, getPixel, setPixel } from '../src/platform/content/bitmap.js';
import { encodeG4 } from '../src/platform/content/ccitt-g4.js';
import { writeTiff } from '../src/platform/content/tiff.js';

export const FAX_WIDTH = 1728;
export const FAX_HEIGHT = 1100;
const WIDTH = FAX_WIDTH;
const HEIGHT = FAX_HEIGHT;

function random(seed: number): () => number {
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

/** Writes `pages` as a TIFF-F (G4, 204x196 dpi) to `file`, the way the content path stores a fax. */
export function writeFaxTiff(file: string, pages: readonly Bitmap[]): void {
  fs.writeFileSync(
    file,
    writeTiff(
      pages.map((bitmap) => ({ width: WIDTH, height: HEIGHT, xRes: 204, yRes: 196, g4: encodeG4(bitmap) })),
    ),
  );
}
