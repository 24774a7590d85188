/**
 * PDF rasterising with MuPDF's WebAssembly build (npm `mupdf`), used inside the conversion
 * workers only: fax pages as 1-bit bitmaps (decisions.md: 1728 pixels wide, 204x196 dpi) and
 * presentation slides as RGB images. docs/benchmarks.md records why MuPDF was chosen.
 */
import * as mupdf from 'mupdf';
import { type Bitmap, createBitmap, dither, threshold } from './bitmap.js';
import { MalformedContentError } from './errors.js';
import { MAX_PAGE_IMAGE_PIXELS } from './layout.js';

export const FAX_WIDTH = 1728;
export const FAX_X_RES = 204;
export const FAX_Y_RES = 196;
/** Longest fax page: ISO B4 (364 mm) at 196 lines per inch; longer pages are scaled down. */
export const FAX_MAX_HEIGHT = 2808;
/** Slides are rendered to fit a square of this many pixels. */
export const SLIDE_SIZE = 1920;

// MuPDF reports repairs and warnings on the console; failures surface as exceptions anyway.
mupdf.setLog({ error: () => {}, warning: () => {} });

function includes(data: Uint8Array, text: string, from: number, to: number): boolean {
  const bytes = Buffer.from(text, 'latin1');
  const haystack = Buffer.from(data.buffer, data.byteOffset + from, Math.max(0, to - from));
  return haystack.includes(bytes);
}

/**
 * Opens a PDF or throws MalformedContentError: no PDF header, cut short (no end-of-file marker
 * in the last kilobyte, where the format requires it), unreadable, or protected by a password.
 */
export function openPdf(data: Uint8Array): mupdf.Document {
  if (data.length === 0) throw new MalformedContentError('empty file');
  if (!includes(data, '%PDF-', 0, Math.min(data.length, 1024))) throw new MalformedContentError('not a PDF');
  if (!includes(data, '%%EOF', Math.max(0, data.length - 1024), data.length)) {
    throw new MalformedContentError('truncated PDF');
  }
  let document: mupdf.Document;
  try {
    document = mupdf.Document.openDocument(data, 'application/pdf');
  } catch (error) {
    throw new MalformedContentError(`unreadable PDF: ${(error as Error).message}`);
  }
  if (document.needsPassword()) {
    document.destroy();
    throw new MalformedContentError('encrypted PDF');
  }
  try {
    document.countPages();
  } catch (error) {
    document.destroy();
    throw new MalformedContentError(`unreadable PDF: ${(error as Error).message}`);
  }
  return document;
}

/**
 * Pixels of the images a page draws (its XObject images, also inside forms, each counted once):
 * a few kilobytes of compressed zeros can declare an image of billions of pixels, which MuPDF
 * would decode whole to draw it. Inline images are not counted (their data is in the page's
 * content stream, bounded with it).
 */
export function pageImagePixels(document: mupdf.Document, index: number): number {
  const pdf = document.asPDF();
  if (!pdf) return 0;
  const page = pdf.loadPage(index) as mupdf.PDFPage;
  try {
    const seen = new Set<number>();
    let pixels = 0;
    const walk = (resources: mupdf.PDFObject, depth: number) => {
      if (depth > 8 || !resources.isDictionary()) return;
      const xobjects = resources.get('XObject');
      if (!xobjects.isDictionary()) return;
      xobjects.forEach((value) => {
        if (value.isIndirect()) {
          const number = value.asIndirect();
          if (seen.has(number)) return;
          seen.add(number);
        }
        const object = value.resolve();
        if (!object.isDictionary() && !object.isStream()) return;
        const subtype = object.get('Subtype');
        if (subtype.isName() && subtype.asName() === 'Image') {
          const width = object.get('Width');
          const height = object.get('Height');
          if (width.isNumber() && height.isNumber())
            pixels += Math.max(0, width.asNumber()) * Math.max(0, height.asNumber());
        } else if (subtype.isName() && subtype.asName() === 'Form') {
          walk(object.get('Resources'), depth + 1);
        }
      });
    };
    walk(page.getObject().getInheritable('Resources'), 0);
    return pixels;
  } finally {
    page.destroy();
  }
}

/** Throws before a page whose images would take too much memory to draw is rendered. */
export function checkPageImages(document: mupdf.Document, index: number): void {
  if (pageImagePixels(document, index) > MAX_PAGE_IMAGE_PIXELS)
    throw new Error(`page ${index + 1} draws images of more than ${MAX_PAGE_IMAGE_PIXELS} pixels`);
}

export interface FaxRenderOptions {
  /** Rotates each page by 90 degrees clockwise before fitting it to the fax width. */
  readonly landscape: boolean;
  /** Error diffusion of grey instead of a black-and-white threshold. */
  readonly photo: boolean;
}

/** One page as a fax bitmap: 1728 wide, the page centred and scaled down to fit when needed. */
export function renderFaxPage(document: mupdf.Document, index: number, options: FaxRenderOptions): Bitmap {
  checkPageImages(document, index);
  const page = document.loadPage(index);
  try {
    const [x0, y0, x1, y1] = page.getBounds();
    const pageWidth = Math.max(1, options.landscape ? y1 - y0 : x1 - x0);
    const pageHeight = Math.max(1, options.landscape ? x1 - x0 : y1 - y0);
    const baseX = FAX_X_RES / 72;
    const baseY = FAX_Y_RES / 72;
    const fit = Math.min(1, FAX_WIDTH / (pageWidth * baseX), FAX_MAX_HEIGHT / (pageHeight * baseY));
    const sx = baseX * fit;
    const sy = baseY * fit;
    const width = Math.min(FAX_WIDTH, Math.max(1, Math.round(pageWidth * sx)));
    const height = Math.min(FAX_MAX_HEIGHT, Math.max(1, Math.round(pageHeight * sy)));
    // The page is centred on the full fax width (rows of whole words convert fastest). Page
    // space has y downwards; landscape maps the page's top-left corner to the top-right.
    const left = (FAX_WIDTH - width) >> 1;
    const matrix: mupdf.Matrix = options.landscape
      ? [0, sy, -sx, 0, sx * y1 + left, -sy * x0]
      : [sx, 0, 0, sy, -sx * x0 + left, -sy * y0];
    const pixmap = new mupdf.Pixmap(mupdf.ColorSpace.DeviceGray, [0, 0, FAX_WIDTH, height], false);
    try {
      pixmap.clear(255);
      const device = new mupdf.DrawDevice(mupdf.Matrix.identity, pixmap);
      try {
        page.run(device, matrix);
        device.close();
      } finally {
        device.destroy();
      }
      const bitmap = createBitmap(FAX_WIDTH, height);
      (options.photo ? dither : threshold)(pixmap.getPixels(), pixmap.getStride(), bitmap);
      return bitmap;
    } finally {
      pixmap.destroy();
    }
  } finally {
    page.destroy();
  }
}

export interface RgbImage {
  readonly width: number;
  readonly height: number;
  /** Three bytes per pixel, rows without padding. */
  readonly data: Uint8Array;
}

/** One page as an RGB image that fits a SLIDE_SIZE square. */
export function renderSlide(document: mupdf.Document, index: number): RgbImage {
  checkPageImages(document, index);
  const page = document.loadPage(index);
  try {
    const [x0, y0, x1, y1] = page.getBounds();
    const scale = SLIDE_SIZE / Math.max(1, x1 - x0, y1 - y0);
    const pixmap = page.toPixmap(
      [scale, 0, 0, scale, -scale * x0, -scale * y0],
      mupdf.ColorSpace.DeviceRGB,
      false,
    );
    try {
      const width = pixmap.getWidth();
      const height = pixmap.getHeight();
      const stride = pixmap.getStride();
      const pixels = pixmap.getPixels();
      const data = new Uint8Array(width * height * 3);
      if (stride === width * 3) data.set(pixels.subarray(0, data.length));
      else
        for (let y = 0; y < height; y++)
          data.set(pixels.subarray(y * stride, y * stride + width * 3), y * width * 3);
      return { width, height, data };
    } finally {
      pixmap.destroy();
    }
  } finally {
    page.destroy();
  }
}
