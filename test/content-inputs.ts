/**
 * Inputs made on the spot for the content tests and the benchmark: PDFs (pdf-lib), WAV files
 * written field by field (so that a header can be made to lie) and test signals.
 */
import {
  concatTransformationMatrix,
  drawObject,
  PDFDocument,
  popGraphicsState,
  pushGraphicsState,
  rgb,
  StandardFonts,
} from 'pdf-lib';

export const A4: [number, number] = [595.28, 841.89];

const WORDS =
  'Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua'.split(
    ' ',
  );

/** A text-heavy PDF: a heading, 60 lines of 10 pt text and a grey box per page. */
export async function textPdf(pages: number, size: [number, number] = A4): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < pages; p++) {
    const page = document.addPage(size);
    const top = size[1] - 50;
    page.drawText(`Telefax page ${p + 1}`, { x: 50, y: top, size: 24, font });
    for (let line = 0; line < 60 && top - 40 - line * 11.5 > 40; line++) {
      let text = '';
      for (let w = 0; w < 14; w++) text += `${WORDS[(p * 7 + line * 3 + w) % WORDS.length]} `;
      page.drawText(text, { x: 50, y: top - 40 - line * 11.5, size: 10, font });
    }
    page.drawRectangle({ x: size[0] - 190, y: 60, width: 140, height: 60, color: rgb(0.5, 0.5, 0.5) });
  }
  return document.save();
}

/** One page, white, with a black bar along its top edge and a grey box (for rotation and photo mode). */
export async function markerPdf(size: [number, number], gray = 0.6): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const page = document.addPage(size);
  page.drawRectangle({ x: 0, y: size[1] - 20, width: size[0], height: 20, color: rgb(0, 0, 0) });
  page.drawRectangle({
    x: size[0] / 4,
    y: size[1] / 4,
    width: size[0] / 2,
    height: size[1] / 4,
    color: rgb(gray, gray, gray),
  });
  return document.save();
}

export function sine(frequency: number, rate: number, seconds: number, amplitude = 0.5): Float32Array {
  const out = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < out.length; i++) out[i] = amplitude * Math.sin((2 * Math.PI * frequency * i) / rate);
  return out;
}

/** Speech-like test signal: a few harmonics, amplitude-modulated into syllables. */
export function speechLike(rate: number, seconds: number): Float32Array {
  const out = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < out.length; i++) {
    const t = i / rate;
    const envelope = 0.5 + 0.5 * Math.sin(2 * Math.PI * 4 * t);
    const pitch = 140 + 20 * Math.sin(2 * Math.PI * 0.5 * t);
    let value = 0;
    for (let h = 1; h <= 8; h++) value += Math.sin(2 * Math.PI * pitch * h * t) / h;
    out[i] = 0.25 * envelope * value;
  }
  return out;
}

export function pcm16(samples: Float32Array, channels = 1): Uint8Array {
  const out = Buffer.alloc(samples.length * 2 * channels);
  samples.forEach((value, i) => {
    const v = Math.max(-32768, Math.min(32767, Math.round(value * 32767)));
    for (let c = 0; c < channels; c++) out.writeInt16LE(v, (i * channels + c) * 2);
  });
  return out;
}

/** A WAV file written field by field, so that a test can make its header lie. */
export function wavFile(options: {
  format?: number;
  channels?: number;
  rate?: number;
  bits?: number;
  blockAlign?: number;
  body: Uint8Array;
  dataSize?: number;
}): Uint8Array {
  const channels = options.channels ?? 1;
  const bits = options.bits ?? 16;
  const rate = options.rate ?? 8000;
  const header = new Uint8Array(44);
  const view = new DataView(header.buffer);
  header.set(Buffer.from('RIFF'), 0);
  view.setUint32(4, 36 + options.body.length, true);
  header.set(Buffer.from('WAVEfmt '), 8);
  view.setUint32(16, 16, true);
  view.setUint16(20, options.format ?? 1, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, rate, true);
  view.setUint32(28, (rate * channels * bits) / 8, true);
  view.setUint16(32, options.blockAlign ?? (channels * bits) / 8, true);
  view.setUint16(34, bits, true);
  header.set(Buffer.from('data'), 36);
  view.setUint32(40, options.dataSize ?? options.body.length, true);
  return Buffer.concat([header, options.body]);
}

/**
 * A one-page PDF that draws an image declaring `width` x `height` grey pixels with only a few
 * bytes of data: what a decompression bomb declares.
 */
export async function hugeImagePdf(width: number, height: number): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const page = document.addPage(A4);
  const image = document.context.flateStream(new Uint8Array(1024), {
    Type: 'XObject',
    Subtype: 'Image',
    Width: width,
    Height: height,
    ColorSpace: 'DeviceGray',
    BitsPerComponent: 8,
  });
  const name = page.node.newXObject('Im', document.context.register(image));
  page.pushOperators(
    pushGraphicsState(),
    concatTransformationMatrix(100, 0, 0, 100, 0, 0),
    drawObject(name),
    popGraphicsState(),
  );
  return document.save();
}

/**
 * A PDF whose page tree counts one page but is a cycle (the Pages node is its own kid): it opens
 * and counts, and fails only when a page is loaded.
 */
export function cyclicPageTreePdf(): Uint8Array {
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [2 0 R] /Count 1 >>'];
  let text = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(text.length);
    text += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = text.length;
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  text += offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  text += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(text);
}
