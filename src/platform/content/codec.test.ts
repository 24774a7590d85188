import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import zlib from 'node:zlib';
import UTIF from 'utif2';
import { type Bitmap, createBitmap, dither, getPixel, setPixel, threshold } from './bitmap.js';
import { decodeG4, encodeG4, G4DecodeError } from './ccitt-g4.js';
import { encodeBitmapPng } from './png.js';
import { readTiffPages, writeTiff } from './tiff.js';

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

/** Bitmaps that exercise every code: random runs of all lengths, noise, solid, odd widths. */
function samples(): Bitmap[] {
  const shapes: [number, number, string][] = [
    [1728, 120, 'runs'],
    [1728, 60, 'noise'],
    [37, 40, 'noise'],
    [3000, 20, 'runs'],
    [1728, 8, 'white'],
    [1728, 8, 'black'],
    [64, 64, 'checker'],
    [1, 5, 'noise'],
  ];
  return shapes.map(([width, height, kind]) => {
    const next = random(width * 31 + height);
    const bitmap = createBitmap(width, height);
    for (let y = 0; y < height; y++) {
      let x = 0;
      let black = next() < 0.5;
      while (x < width) {
        const run = kind === 'runs' ? Math.floor(next() ** 3 * width) + 1 : 1;
        for (let i = 0; i < run && x < width; i++, x++) {
          const on =
            kind === 'runs'
              ? black
              : kind === 'noise'
                ? next() < 0.5
                : kind === 'black'
                  ? true
                  : kind === 'checker'
                    ? ((x >> 2) + (y >> 2)) % 2 === 0
                    : false;
          setPixel(bitmap, x, y, on);
        }
        black = !black;
      }
    }
    return bitmap;
  });
}

function sameBitmap(a: Bitmap, b: Bitmap): boolean {
  if (a.width !== b.width || a.height !== b.height) return false;
  for (let y = 0; y < a.height; y++) {
    for (let x = 0; x < a.width; x++) if (getPixel(a, x, y) !== getPixel(b, x, y)) return false;
  }
  return true;
}

describe('CCITT G4 and fax TIFF', () => {
  test('a multi-page G4 TIFF decodes with an independent decoder (utif2) to the same bitmaps', () => {
    const bitmaps = samples();
    const tiff = writeTiff(
      bitmaps.map((bitmap) => ({
        width: bitmap.width,
        height: bitmap.height,
        xRes: 204,
        yRes: 196,
        g4: encodeG4(bitmap),
      })),
    );
    const buffer = Buffer.from(tiff);
    const ifds = UTIF.decode(buffer);
    assert.equal(ifds.length, bitmaps.length);
    ifds.forEach((ifd, index) => {
      const bitmap = bitmaps[index]!;
      assert.equal((ifd.t259 as number[])[0], 4, 'compression is CCITT T.6');
      assert.equal((ifd.t258 as number[])[0], 1, 'one bit per sample');
      UTIF.decodeImage(buffer, ifd);
      assert.equal(ifd.width, bitmap.width);
      assert.equal(ifd.height, bitmap.height);
      const rgba = UTIF.toRGBA8(ifd);
      let differing = 0;
      for (let y = 0; y < bitmap.height; y++) {
        for (let x = 0; x < bitmap.width; x++) {
          const black = rgba[(y * bitmap.width + x) * 4] === 0 ? 1 : 0;
          if (black !== getPixel(bitmap, x, y)) differing++;
        }
      }
      assert.equal(differing, 0, `page ${index} (${bitmap.width}x${bitmap.height})`);
    });
  });

  test('the page directory gives size, resolution and each page strip', () => {
    const bitmaps = samples().slice(0, 3);
    const g4 = bitmaps.map(encodeG4);
    const tiff = writeTiff(
      bitmaps.map((bitmap, i) => ({
        width: bitmap.width,
        height: bitmap.height,
        xRes: 204,
        yRes: 196,
        g4: g4[i]!,
      })),
    );
    const pages = readTiffPages(tiff);
    assert.equal(pages.length, 3);
    pages.forEach((page, i) => {
      assert.deepEqual(
        [page.width, page.height, page.xRes, page.yRes],
        [bitmaps[i]!.width, bitmaps[i]!.height, 204, 196],
      );
      assert.deepEqual(tiff.subarray(page.offset, page.offset + page.length), g4[i]);
      assert.ok(
        sameBitmap(
          decodeG4(tiff.subarray(page.offset, page.offset + page.length), page.width, page.height),
          bitmaps[i]!,
        ),
      );
    });
  });

  test('encoding and decoding round-trip every sample', () => {
    for (const bitmap of samples()) {
      assert.ok(sameBitmap(decodeG4(encodeG4(bitmap), bitmap.width, bitmap.height), bitmap));
    }
  });

  test('corrupt or cut G4 data is rejected', () => {
    const bitmap = samples()[1]!;
    const g4 = encodeG4(bitmap);
    assert.throws(() => decodeG4(g4.subarray(0, g4.length >> 1), bitmap.width, bitmap.height), G4DecodeError);
    assert.throws(() => decodeG4(new Uint8Array(64), bitmap.width, bitmap.height), G4DecodeError);
  });

  test('threshold makes grey below the level black; dither turns mid-grey into about half black dots', () => {
    const width = 64;
    const gray = new Uint8Array(width * 4).fill(255);
    gray.fill(100, 0, width); // row 0 dark
    gray.fill(160, width, 2 * width); // row 1 light
    gray.fill(128, 2 * width, 4 * width); // rows 2-3 mid-grey
    const hard = createBitmap(width, 4);
    threshold(gray, width, hard);
    const count = (bitmap: Bitmap, row: number) => {
      let n = 0;
      for (let x = 0; x < width; x++) n += getPixel(bitmap, x, row);
      return n;
    };
    assert.deepEqual([count(hard, 0), count(hard, 1), count(hard, 2)], [64, 0, 0]);
    const soft = createBitmap(width, 4);
    dither(gray, width, soft);
    assert.ok(count(soft, 0) > 28 && count(soft, 0) < 52, `dark grey dots: ${count(soft, 0)} of 64`);
    const mid = count(soft, 2) + count(soft, 3);
    assert.ok(mid > 40 && mid < 88, `mid-grey dots: ${mid} of 128`);
    assert.ok(count(soft, 1) > 0 && count(soft, 1) < 64, 'light grey gets some dots');
  });

  test('a page PNG is 1 bit deep, black where the bitmap is black, with the fax resolution', () => {
    const bitmap = createBitmap(20, 3);
    setPixel(bitmap, 0, 0, true);
    setPixel(bitmap, 19, 2, true);
    const png = encodeBitmapPng(bitmap, 204, 196);
    assert.equal(png.readUInt32BE(16), 20);
    assert.equal(png.readUInt32BE(20), 3);
    assert.equal(png[24], 1, 'bit depth');
    assert.equal(png[25], 0, 'greyscale');
    const phys = png.indexOf('pHYs');
    assert.equal(png.readUInt32BE(phys + 4), Math.round(204 / 0.0254));
    const idat = png.indexOf('IDAT');
    const raw = zlib.inflateSync(png.subarray(idat + 4, idat + 4 + png.readUInt32BE(idat - 4)));
    // Row 0: filter byte, then 0 (black) in the first bit.
    assert.equal(raw[1]! >> 7, 0);
    assert.equal(raw[2]! >> 7, 1);
  });
});
