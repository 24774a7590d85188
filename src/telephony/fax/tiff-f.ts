/**
 * TIFF-F for the fax engine (decisions.md "Fax engine"). What spandsp sends is the
 * multi-page G4 TIFF the content path already stores for a fax (FILES.faxTiff), written to a
 * file as it is; what spandsp received (written in T.6 by FaxSession) goes back through the
 * content code's TIFF reader and G4 decoder into page images.
 */
import fs from 'node:fs/promises';
import { convertFax } from '../../platform/content/converters.js';
import type { FaxPageImage } from '../../platform/content/fax-pdf.js';
import { FILES } from '../../platform/content/layout.js';
import { readTiffPages, TiffFormatError } from '../../platform/content/tiff.js';

const TIFF_G4 = 4;

/** The TIFF-F of a PDF through the content path's fax conversion (portrait, normal mode). */
export async function faxTiffFromPdf(pdf: Uint8Array): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const { status } = await convertFax(pdf, { orientation: 'portrait', mode: 'normal' }, (file, data) => {
    if (file === FILES.faxTiff) chunks.push(data);
  });
  if (status !== 'ok') throw new TiffFormatError(`no fax pages (${status})`);
  return Buffer.concat(chunks);
}

/** The pages of a TIFF spandsp received; each page's G4 data as the content path stores it. */
export function receivedPages(tiff: Uint8Array): FaxPageImage[] {
  return readTiffPages(tiff).map((page) => {
    if (page.compression !== TIFF_G4 || page.bitsPerSample !== 1)
      throw new TiffFormatError(`received page is not G4 (compression ${page.compression})`);
    return {
      width: page.width,
      height: page.height,
      xRes: page.xRes,
      yRes: page.yRes,
      g4: msbFirst(tiff.subarray(page.offset, page.offset + page.length), page.fillOrder),
    };
  });
}

/** spandsp writes FillOrder 2 (LSB first); the content path's G4 data is MSB first. */
function msbFirst(data: Uint8Array, fillOrder: number): Uint8Array {
  if (fillOrder !== 2) return data;
  return data.map((byte) => {
    let reversed = 0;
    for (let bit = 0; bit < 8; bit++) reversed |= ((byte >> bit) & 1) << (7 - bit);
    return reversed;
  });
}

/** Reads a received TIFF file (absent or empty when no page arrived: no pages). */
export async function readReceivedFile(file: string): Promise<FaxPageImage[]> {
  const data = await fs.readFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return new Uint8Array(0);
    throw error;
  });
  return data.length === 0 ? [] : receivedPages(data);
}
