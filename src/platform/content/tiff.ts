/**
 * Multi-page fax TIFF (decisions.md "Content and conversion": TIFF download is a multi-page
 * CCITT G4 TIFF). Written page by page so that a long fax streams to storage: each page is its
 * IFD, then its resolution values, then its G4 strip, and the IFD points at the next page.
 */

export interface TiffPage {
  readonly width: number;
  readonly height: number;
  readonly xRes: number;
  readonly yRes: number;
  /** The page's T.6 data (one strip). */
  readonly g4: Uint8Array;
}

/** Where a page's strip sits in the file, so that one page can be read by range. */
export interface TiffPageLocation {
  readonly width: number;
  readonly height: number;
  readonly offset: number;
  readonly length: number;
}

const SHORT = 3;
const LONG = 4;
const RATIONAL = 5;
const ENTRY_COUNT = 17;
const IFD_SIZE = 2 + ENTRY_COUNT * 12 + 4;
const VALUES_SIZE = 16; // two rationals

export const TIFF_HEADER_SIZE = 8;

/** Little-endian header whose first IFD follows right after it. */
export function tiffHeader(): Uint8Array {
  const header = new Uint8Array(TIFF_HEADER_SIZE);
  const view = new DataView(header.buffer);
  header[0] = 0x49;
  header[1] = 0x49;
  view.setUint16(2, 42, true);
  view.setUint32(4, TIFF_HEADER_SIZE, true);
  return header;
}

/**
 * The bytes of page `index` of `count` pages, to be written at file offset `offset` (even).
 * Returns the bytes and the location of the strip.
 */
export function tiffPage(
  page: TiffPage,
  index: number,
  count: number,
  offset: number,
): { bytes: Uint8Array; location: TiffPageLocation } {
  const valuesOffset = offset + IFD_SIZE;
  const stripOffset = valuesOffset + VALUES_SIZE;
  const padded = page.g4.length + (page.g4.length & 1);
  const total = IFD_SIZE + VALUES_SIZE + padded;
  const next = index + 1 < count ? offset + total : 0;
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  view.setUint16(0, ENTRY_COUNT, true);
  let at = 2;
  const entry = (tag: number, type: number, value: number, second?: number) => {
    view.setUint16(at, tag, true);
    view.setUint16(at + 2, type, true);
    view.setUint32(at + 4, second === undefined ? 1 : 2, true);
    if (type === SHORT) {
      view.setUint16(at + 8, value, true);
      if (second !== undefined) view.setUint16(at + 10, second, true);
    } else {
      view.setUint32(at + 8, value, true);
    }
    at += 12;
  };
  entry(254, LONG, 2); // NewSubfileType: page of a multi-page document
  entry(256, LONG, page.width);
  entry(257, LONG, page.height);
  entry(258, SHORT, 1); // BitsPerSample
  entry(259, SHORT, 4); // Compression: CCITT T.6
  entry(262, SHORT, 0); // PhotometricInterpretation: WhiteIsZero
  entry(266, SHORT, 1); // FillOrder: most significant bit first
  entry(273, LONG, stripOffset);
  entry(277, SHORT, 1); // SamplesPerPixel
  entry(278, LONG, page.height); // RowsPerStrip: one strip per page
  entry(279, LONG, page.g4.length);
  entry(282, RATIONAL, valuesOffset);
  entry(283, RATIONAL, valuesOffset + 8);
  entry(284, SHORT, 1); // PlanarConfiguration
  entry(293, LONG, 0); // T6Options
  entry(296, SHORT, 2); // ResolutionUnit: inch
  entry(297, SHORT, index, count); // PageNumber
  view.setUint32(at, next, true);
  view.setUint32(IFD_SIZE, page.xRes, true);
  view.setUint32(IFD_SIZE + 4, 1, true);
  view.setUint32(IFD_SIZE + 8, page.yRes, true);
  view.setUint32(IFD_SIZE + 12, 1, true);
  bytes.set(page.g4, IFD_SIZE + VALUES_SIZE);
  return {
    bytes,
    location: { width: page.width, height: page.height, offset: stripOffset, length: page.g4.length },
  };
}

/** A whole multi-page TIFF in memory (for small documents and tests). */
export function writeTiff(pages: readonly TiffPage[]): Uint8Array {
  const parts = [tiffHeader()];
  let offset = TIFF_HEADER_SIZE;
  pages.forEach((page, index) => {
    const { bytes } = tiffPage(page, index, pages.length, offset);
    parts.push(bytes);
    offset += bytes.length;
  });
  const out = new Uint8Array(offset);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export interface ParsedTiffPage extends TiffPageLocation {
  readonly compression: number;
  readonly photometric: number;
  readonly bitsPerSample: number;
  /** 1: bits most significant first (what `writeTiff` makes); 2: least significant first (libtiff's fax writers). */
  readonly fillOrder: number;
  readonly xRes: number;
  readonly yRes: number;
}

export class TiffFormatError extends Error {}

/**
 * Reads the page directory of a single-strip bilevel TIFF (what `writeTiff` makes, and what
 * fax software commonly writes).
 */
export function readTiffPages(data: Uint8Array): ParsedTiffPage[] {
  if (data.length < 8) throw new TiffFormatError('too short');
  const little = data[0] === 0x49 && data[1] === 0x49;
  if (!little && !(data[0] === 0x4d && data[1] === 0x4d))
    throw new TiffFormatError('no TIFF byte order mark');
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint16(2, little) !== 42) throw new TiffFormatError('not a TIFF');
  const pages: ParsedTiffPage[] = [];
  const seen = new Set<number>();
  let ifd = view.getUint32(4, little);
  while (ifd !== 0) {
    if (seen.has(ifd) || ifd + 2 > data.length) throw new TiffFormatError('bad IFD offset');
    seen.add(ifd);
    const count = view.getUint16(ifd, little);
    if (ifd + 2 + count * 12 + 4 > data.length) throw new TiffFormatError('IFD beyond the end');
    const tags = new Map<number, number[]>();
    for (let i = 0; i < count; i++) {
      const at = ifd + 2 + i * 12;
      const tag = view.getUint16(at, little);
      const type = view.getUint16(at + 2, little);
      const n = view.getUint32(at + 4, little);
      const size = type === SHORT ? 2 : type === LONG ? 4 : type === RATIONAL ? 8 : 0;
      if (size === 0) continue;
      const inline = size * n <= 4;
      const base = inline ? at + 8 : view.getUint32(at + 8, little);
      if (base + size * n > data.length) throw new TiffFormatError('tag value beyond the end');
      const values: number[] = [];
      for (let k = 0; k < n; k++) {
        const p = base + k * size;
        if (type === SHORT) values.push(view.getUint16(p, little));
        else if (type === LONG) values.push(view.getUint32(p, little));
        else values.push(view.getUint32(p, little) / (view.getUint32(p + 4, little) || 1));
      }
      tags.set(tag, values);
    }
    const first = (tag: number, fallback?: number): number => {
      const value = tags.get(tag)?.[0] ?? fallback;
      if (value === undefined) throw new TiffFormatError(`tag ${tag} missing`);
      return value;
    };
    const offsets = tags.get(273) ?? [];
    const lengths = tags.get(279) ?? [];
    if (offsets.length !== 1 || lengths.length !== 1)
      throw new TiffFormatError('expected one strip per page');
    const offset = offsets[0]!;
    const length = lengths[0]!;
    if (offset + length > data.length) throw new TiffFormatError('strip beyond the end');
    pages.push({
      width: first(256),
      height: first(257),
      compression: first(259, 1),
      photometric: first(262, 0),
      bitsPerSample: first(258, 1),
      fillOrder: first(266, 1),
      xRes: Math.round(first(282, 204)),
      yRes: Math.round(first(283, 196)),
      offset,
      length,
    });
    ifd = view.getUint32(ifd + 2 + count * 12, little);
  }
  return pages;
}
