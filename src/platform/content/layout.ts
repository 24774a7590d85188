/**
 * How converted content is laid out in a content version ("<object>/<job>/"): file names and
 * the fax page index. Kept apart from the converters so that the main thread can use the names
 * without loading the WebAssembly codecs.
 */
import type { TiffPageLocation } from './tiff.js';

export const FILES = {
  /** Uploaded PDF (fax, presentation); presentations keep it as their original. */
  sourcePdf: 'source.pdf',
  /** Uploaded WAV or Ogg. */
  sourceAudio: 'source.audio',
  faxTiff: 'fax.tif',
  faxIndex: 'fax.json',
  faxPdf: 'fax.pdf',
  faxPng: (page: number) => `page-${page}.png`,
  slide: (page: number) => `slide-${page}.png`,
  wav: 'audio.wav',
  ogg: 'audio.ogg',
} as const;

/**
 * A page whose images come to more pixels is refused (too-large at upload; a failed conversion
 * otherwise): MuPDF decodes an image whole to draw it, and a few kilobytes of compressed zeros
 * can declare billions of pixels. 100 million pixels take 400 MB to draw at most.
 */
export const MAX_PAGE_IMAGE_PIXELS = 100_000_000;

/** fax.json: where each page's G4 data is in fax.tif. */
export interface FaxIndex {
  readonly page_count: number;
  readonly x_res: number;
  readonly y_res: number;
  readonly pages: readonly TiffPageLocation[];
}

export interface FaxOptions {
  readonly orientation: 'portrait' | 'landscape';
  readonly mode: 'normal' | 'photo';
}
