/**
 * Received faxes (spec "Fax": status record while pages arrive, report entries with incoming
 * true; "Events" fax_report, fax_convert; "Push" fax_new; decisions.md "Fax over the network",
 * receiving). The call engine answers a fax number and tells this area through its recorder
 * (CallRecorder.faxStarted, faxEnded): the fax object of the number's owner is made when the
 * call is answered, and the pages received whole become its content through the same content
 * path as an upload's (fax.tif with its page index; PNG and PDF derived on demand).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import { createBitmap } from '../../platform/content/bitmap.js';
import { decodeG4, encodeG4 } from '../../platform/content/ccitt-g4.js';
import type { FaxPageImage } from '../../platform/content/fax-pdf.js';
import { type ContentService, type FaxIndex, FILES } from '../../platform/content/index.js';
import { type TiffPageLocation, tiffHeader, tiffPage } from '../../platform/content/tiff.js';
import { newUuid, uuidSortKey } from '../../platform/ids.js';
import type { MailLanguage, MailNotice } from '../../platform/mail.js';
import type { ObjectStore } from '../../platform/object-store/index.js';
import type { FaxReception, IncomingFax, LeftReception, ReceivedFax } from '../../telephony/index.js';
import * as repo from './fax.repository.js';
import { type FaxService, toEntry } from './fax.service.js';

/** Fine resolution (decisions.md "Content and conversion"): what every stored fax page has. */
const FINE_X_RES = 204;
const FINE_Y_RES = 196;
/** A page below this vertical resolution came in standard mode (98 dpi): its rows are doubled. */
const STANDARD_BELOW = 150;
/** T30_ERR_OK. */
const T30_OK = 0;

/** Where a received fax is announced beyond its events: the number's settings, push and mail. */
export interface FaxIncomingDeps {
  readonly store: ObjectStore;
  readonly content: ContentService;
  readonly faxes: FaxService;
  readonly log: FastifyBaseLogger;
  readonly clock: Clock;
  /** The called number's notification_email and notification_attachment (partner settings). */
  notification(number: string): Promise<{ email?: string; attachment: boolean }>;
  /** The owner's language for the mail. */
  language(owner: string): Promise<MailLanguage>;
  /** fax_new to the owner's devices (spec "Push"). */
  pushFaxNew(owner: string, fax: { fax: string; phone: string; page_count: number }): Promise<unknown>;
  sendMail(to: string, notice: MailNotice): Promise<void>;
}

export class FaxIncoming {
  constructor(private readonly deps: FaxIncomingDeps) {}

  /**
   * A fax call was answered: a fax of the number's owner in status record (object_new), in the
   * owner's tag_inbox, with its report entry (incoming, status transmit) as fax_report.
   */
  started(fax: IncomingFax): Promise<FaxReception> {
    const { store } = this.deps;
    return store.write(async (w) => {
      const tags = await store.userTags(w.trx, fax.owner);
      // No storage check here: the pages are checked against the volume when they are stored.
      const row = await store.createObject(w, {
        type: 'fax',
        owner: fax.owner,
        description: '',
        status: 'record',
        data: {},
        tags: [tags.tag_inbox],
        checkQuota: false,
      });
      const report = newUuid();
      const stored: repo.ReportRow = {
        uuid: report,
        fax: row.uuid,
        sort_key: uuidSortKey(report),
        incoming: 1,
        from_number: fax.from,
        to_number: fax.to,
        time_start: Math.floor(fax.timeStart),
        time_end: null,
        status: 'transmit',
        sip_status_code: null,
        fax_error_code: null,
        page_count: null,
        fax_ident: null,
        fax_header: null,
      };
      await repo.insertReport(w.trx, stored);
      await repo.insertReception(w.trx, {
        fax: row.uuid,
        report,
        owner: fax.owner,
        node: fax.node,
        rx_file: fax.rxFile,
      });
      w.emit(await store.readers(w.trx, row), 'fax_report', {
        fax: row.uuid,
        report: { [report]: toEntry(stored) },
      });
      return { fax: row.uuid, report };
    });
  }

  /**
   * The fax call ended. Pages received whole become the fax's content (status ok, fax_convert
   * with page_count), also when the call broke off later (the report then says fail with the
   * T.30 code); without a page the fax is fail (empty when T.30 ended well with none). The report
   * gets time_end, status, fax_error_code (fax_report); with pages, fax_new goes to the owner's
   * devices and the number's notification_email gets a mail (the PDF attached on request).
   */
  async ended(reception: FaxReception, fax: IncomingFax, received: ReceivedFax): Promise<void> {
    const { faxes, store, log } = this.deps;
    const pages = received.pages.map(fine);
    const count = pages.length;
    const content = count > 0 ? await this.storePages(reception.fax, pages) : undefined;
    await faxes.handleConversion({
      job: newUuid(),
      type: 'fax',
      kind: 'fax',
      objectUuid: reception.fax,
      status: content ? 'ok' : received.completionCode === T30_OK ? 'empty' : 'fail',
      content,
      metadata: content ? { page_count: count, x_res: FINE_X_RES, y_res: FINE_Y_RES } : {},
    });
    const ok = received.completionCode === T30_OK && count > 0;
    const stillThere = await store.write(async (w) => {
      await repo.deleteReception(w.trx, reception.fax);
      await repo.updateReport(w.trx, reception.report, {
        status: ok ? 'ok' : 'fail',
        time_end: Math.floor(received.timeEnd),
        fax_error_code: received.completionCode,
        page_count: count,
      });
      const row = await repo.findReport(w.trx, reception.fax, reception.report);
      const owner = await faxes.objects.ownerOf(w.trx, reception.fax);
      if (!row || !owner) return false;
      const object = await store.getForRead(w.trx, owner, reception.fax, faxes.objects.definition);
      w.emit(await store.readers(w.trx, object.row), 'fax_report', {
        fax: reception.fax,
        report: { [reception.report]: toEntry(row) },
      });
      return true;
    });
    if (!stillThere || count === 0) return;
    try {
      await this.deps.pushFaxNew(fax.owner, { fax: reception.fax, phone: fax.from, page_count: count });
    } catch (error) {
      log.error({ err: error, fax: reception.fax }, 'fax_new push not queued');
    }
    await this.mail(reception.fax, fax, count).catch((error: unknown) =>
      log.warn({ err: error, fax: reception.fax }, 'fax notification mail not sent'),
    );
  }

  /** The receptions `node` left running when it stopped without ending them (it died). */
  async left(node: string): Promise<LeftReception[]> {
    const rows = await repo.receptionsOf(this.deps.store.db, node);
    return rows.map((row) => ({
      reception: { fax: row.fax, report: row.report },
      fax: {
        owner: row.owner,
        from: row.from_number,
        to: row.to_number,
        timeStart: row.time_start,
        node,
        rxFile: row.rx_file,
      },
    }));
  }

  /** A content version of the fax holding the pages (fax.tif and its index), as a conversion writes it. */
  private async storePages(fax: string, pages: readonly FaxPageImage[]): Promise<string> {
    const { content } = this.deps;
    const version = `${fax}/${newUuid()}/`;
    const chunks: Uint8Array[] = [tiffHeader()];
    let offset = chunks[0]!.length;
    const locations: TiffPageLocation[] = [];
    pages.forEach((page, index) => {
      const { bytes, location } = tiffPage(page, index, pages.length, offset);
      chunks.push(bytes);
      offset += bytes.length;
      locations.push(location);
    });
    const index: FaxIndex = {
      page_count: pages.length,
      x_res: FINE_X_RES,
      y_res: FINE_Y_RES,
      pages: locations,
    };
    await content.storage.put(content.key(version, FILES.faxTiff), Buffer.concat(chunks));
    await content.storage.put(
      content.key(version, FILES.faxIndex),
      new TextEncoder().encode(JSON.stringify(index)),
    );
    return version;
  }

  /** The notification mail when the called number has a notification_email. */
  private async mail(uuid: string, fax: IncomingFax, pages: number): Promise<void> {
    const { email, attachment } = await this.deps.notification(fax.to);
    if (!email) return;
    const { faxes, content } = this.deps;
    const pdf = attachment ? await content.storage.read(await faxes.pdfKey(fax.owner, uuid)) : undefined;
    const notice = faxMail({
      language: await this.deps.language(fax.owner),
      from: fax.from,
      to: fax.to,
      fax: uuid,
      pages,
      time: new Date(fax.timeStart * 1000),
      pdf,
    });
    await this.deps.sendMail(email, notice);
  }
}

/** A page at fine resolution: a standard-mode page (98 dpi) has each row twice. */
function fine(page: FaxPageImage): FaxPageImage {
  if (page.yRes >= STANDARD_BELOW) return { ...page, xRes: FINE_X_RES, yRes: FINE_Y_RES };
  const standard = decodeG4(page.g4, page.width, page.height);
  const doubled = createBitmap(page.width, page.height * 2);
  for (let row = 0; row < page.height; row++) {
    const line = standard.data.subarray(row * standard.stride, (row + 1) * standard.stride);
    doubled.data.set(line, 2 * row * doubled.stride);
    doubled.data.set(line, (2 * row + 1) * doubled.stride);
  }
  return {
    width: page.width,
    height: doubled.height,
    xRes: FINE_X_RES,
    yRes: FINE_Y_RES,
    g4: encodeG4(doubled),
  };
}

interface FaxMailInput {
  language: MailLanguage;
  /** The sender's number (caller id), or `anonymous`. */
  from: string;
  to: string;
  fax: string;
  pages: number;
  time: Date;
  /** The fax as PDF to attach; undefined: no attachment. */
  pdf: Uint8Array | undefined;
}

/** The notification mail (spec "Partner API" phone settings notification_email, notification_attachment). */
function faxMail(input: FaxMailInput): MailNotice {
  const de = input.language === 'de';
  const when = input.time.toISOString().replace('T', ' ').slice(0, 19);
  const sender = input.from === 'anonymous' ? (de ? 'unbekannt' : 'unknown') : input.from;
  const text = de
    ? [
        'Guten Tag,',
        `für ${input.to} ist ein Fax eingegangen.`,
        `Absender: ${sender}\nZeit: ${when} UTC\nSeiten: ${input.pages}\nFax: ${input.fax}`,
        input.pdf ? 'Das Fax ist als PDF-Datei angehängt.' : 'Das Fax finden Sie in Ihren Faxen.',
        '-- \nIhr Zentrale-Team',
      ]
    : [
        'Hello,',
        `a fax arrived for ${input.to}.`,
        `Sender: ${sender}\nTime: ${when} UTC\nPages: ${input.pages}\nFax: ${input.fax}`,
        input.pdf ? 'The fax is attached as a PDF file.' : 'You find the fax among your faxes.',
        '-- \nYour Zentrale team',
      ];
  return {
    subject: de ? `Neues Fax von ${sender}` : `New fax from ${sender}`,
    text: text.join('\n\n'),
    language: input.language,
    attachments: input.pdf
      ? [{ filename: `fax-${input.fax}.pdf`, content: input.pdf, contentType: 'application/pdf' }]
      : [],
  };
}
