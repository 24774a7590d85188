/**
 * PDFs of fax content (spec "Fax": GET /api/fax/{uuid}/{xxx}.pdf and the sender report
 * GET /api/fax/{fax-uuid}/report/{report-uuid}/{xxx}.pdf), written with pdf-lib. Fax pages go
 * in as the G4 data they are stored as (CCITTFaxDecode images), so nothing is decoded or
 * re-encoded and each page keeps its exact size at 204x196 dpi.
 */
import {
  concatTransformationMatrix,
  drawObject,
  PDFDocument,
  type PDFFont,
  type PDFPage,
  type PDFRef,
  popGraphicsState,
  pushGraphicsState,
  rgb,
  StandardFonts,
} from 'pdf-lib';
import { readTiffPages } from './tiff.js';

export interface FaxPageImage {
  readonly width: number;
  readonly height: number;
  readonly xRes: number;
  readonly yRes: number;
  readonly g4: Uint8Array;
}

function embedG4(document: PDFDocument, page: FaxPageImage): PDFRef {
  const stream = document.context.stream(page.g4, {
    Type: 'XObject',
    Subtype: 'Image',
    Width: page.width,
    Height: page.height,
    BitsPerComponent: 1,
    ColorSpace: 'DeviceGray',
    Filter: 'CCITTFaxDecode',
    DecodeParms: { K: -1, Columns: page.width, Rows: page.height },
  });
  return document.context.register(stream);
}

function drawImage(page: PDFPage, image: PDFRef, x: number, y: number, width: number, height: number): void {
  const name = page.node.newXObject('Fax', image);
  page.pushOperators(
    pushGraphicsState(),
    concatTransformationMatrix(width, 0, 0, height, x, y),
    drawObject(name),
    popGraphicsState(),
  );
}

/** A PDF with one page per TIFF page, each the page's physical size. */
export async function faxPdfFromTiff(tiff: Uint8Array): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  document.setProducer('Zentrale');
  for (const location of readTiffPages(tiff)) {
    if (location.compression !== 4 || location.bitsPerSample !== 1) throw new Error('not a G4 fax page');
    const image: FaxPageImage = {
      ...location,
      g4: tiff.subarray(location.offset, location.offset + location.length),
    };
    const width = (image.width * 72) / image.xRes;
    const height = (image.height * 72) / image.yRes;
    const page = document.addPage([width, height]);
    drawImage(page, embedG4(document, image), 0, 0, width, height);
  }
  return document.save();
}

export interface FaxReportData {
  readonly language: 'de' | 'en';
  readonly fax: string;
  readonly report: string;
  readonly description?: string;
  readonly incoming: boolean;
  readonly from: string;
  readonly to: string;
  readonly time_start: number;
  readonly time_end?: number;
  readonly status: string;
  readonly sip_status_code?: number;
  readonly fax_error_code?: number;
  readonly page_count?: number;
  readonly fax_ident?: string;
  readonly fax_header?: string;
}

const LABELS = {
  en: {
    title: 'Fax transmission report',
    incoming: 'Fax reception report',
    from: 'From',
    to: 'To',
    start: 'Start',
    end: 'End',
    duration: 'Duration',
    pages: 'Pages',
    status: 'Result',
    sip: 'SIP status',
    error: 'Fax error code',
    description: 'Description',
    ident: 'Station id',
    header: 'Header',
    fax: 'Fax',
    report: 'Report',
    firstPage: 'First page',
    seconds: 's',
    statuses: {
      queued: 'queued',
      dial: 'dialling',
      transmit: 'transmitting',
      ok: 'OK',
      fail: 'failed',
      cancel: 'cancelled',
      busy: 'busy',
      error: 'internal error',
    } as Record<string, string>,
  },
  de: {
    title: 'Faxsendebericht',
    incoming: 'Faxempfangsbericht',
    from: 'Von',
    to: 'An',
    start: 'Beginn',
    end: 'Ende',
    duration: 'Dauer',
    pages: 'Seiten',
    status: 'Ergebnis',
    sip: 'SIP-Status',
    error: 'Fax-Fehlercode',
    description: 'Beschreibung',
    ident: 'Kennung',
    header: 'Kopfzeile',
    fax: 'Fax',
    report: 'Bericht',
    firstPage: 'Erste Seite',
    seconds: 's',
    statuses: {
      queued: 'in der Warteschlange',
      dial: 'Wählen',
      transmit: 'Übertragung',
      ok: 'OK',
      fail: 'fehlgeschlagen',
      cancel: 'abgebrochen',
      busy: 'besetzt',
      error: 'interner Fehler',
    } as Record<string, string>,
  },
};

function utc(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** Text the standard font can show: other characters become "?". */
function printable(font: PDFFont, text: string): string {
  const supported = new Set(font.getCharacterSet());
  return [...text.replace(/[\r\n\t]+/g, ' ')]
    .map((c) => (supported.has(c.codePointAt(0)!) ? c : '?'))
    .join('');
}

/** The report of one fax transmission, with a reduced image of the first page when given. */
export async function faxReportPdf(data: FaxReportData, firstPage?: FaxPageImage): Promise<Uint8Array> {
  const labels = LABELS[data.language] ?? LABELS.en;
  const document = await PDFDocument.create();
  document.setProducer('Zentrale');
  document.setTitle(data.incoming ? labels.incoming : labels.title);
  const font = await document.embedFont(StandardFonts.Helvetica);
  const bold = await document.embedFont(StandardFonts.HelveticaBold);
  const page = document.addPage([595.28, 841.89]);
  const margin = 56;
  let y = 841.89 - margin;
  page.drawText(printable(bold, data.incoming ? labels.incoming : labels.title), {
    x: margin,
    y,
    size: 20,
    font: bold,
  });
  y -= 14;
  page.drawLine({
    start: { x: margin, y },
    end: { x: 595.28 - margin, y },
    thickness: 1,
    color: rgb(0, 0, 0),
  });
  y -= 24;
  const rows: [string, string | undefined][] = [
    [labels.from, data.from],
    [labels.to, data.to],
    [labels.start, utc(data.time_start)],
    [labels.end, data.time_end === undefined ? undefined : utc(data.time_end)],
    [
      labels.duration,
      data.time_end === undefined
        ? undefined
        : `${Math.max(0, data.time_end - data.time_start)} ${labels.seconds}`,
    ],
    [labels.pages, data.page_count === undefined ? undefined : String(data.page_count)],
    [labels.status, labels.statuses[data.status] ?? data.status],
    [labels.sip, data.sip_status_code === undefined ? undefined : String(data.sip_status_code)],
    [labels.error, data.fax_error_code === undefined ? undefined : String(data.fax_error_code)],
    [labels.ident, data.fax_ident || undefined],
    [labels.header, data.fax_header || undefined],
    [labels.description, data.description || undefined],
    [labels.fax, data.fax],
    [labels.report, data.report],
  ];
  for (const [label, value] of rows) {
    if (value === undefined) continue;
    page.drawText(printable(bold, label), { x: margin, y, size: 11, font: bold });
    const text = printable(font, value);
    page.drawText(text.length > 80 ? `${text.slice(0, 77)}...` : text, {
      x: margin + 130,
      y,
      size: 11,
      font,
    });
    y -= 18;
  }
  if (firstPage) {
    y -= 12;
    page.drawText(printable(bold, labels.firstPage), { x: margin, y, size: 11, font: bold });
    y -= 8;
    // The page's physical size, scaled to what is left of the report page.
    const physicalWidth = (firstPage.width * 72) / firstPage.xRes;
    const physicalHeight = (firstPage.height * 72) / firstPage.yRes;
    const scale = Math.min((595.28 - 2 * margin) / physicalWidth, (y - margin) / physicalHeight, 0.6);
    const width = physicalWidth * scale;
    const height = physicalHeight * scale;
    const x = (595.28 - width) / 2;
    drawImage(page, embedG4(document, firstPage), x, y - height, width, height);
    page.drawRectangle({
      x,
      y: y - height,
      width,
      height,
      borderWidth: 0.5,
      borderColor: rgb(0.3, 0.3, 0.3),
    });
  }
  return document.save();
}
