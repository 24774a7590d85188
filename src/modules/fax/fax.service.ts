/**
 * Faxes (spec "Fax", Resources "Fax"): an object type of the store whose content is fax pages
 * (decisions.md "Content and conversion": a multi-page CCITT G4 TIFF at 204x196 dpi), made in
 * the background from an uploaded PDF. Access, tags, trash and object events come from the
 * object store; reports are rows of their own, added by telephony (addReport) and by sending
 * (fax.send.ts, fax.queue.ts).
 */
import { ContentObjects, type ContentObjectsDeps } from '../../platform/content/content-object.js';
import {
  type ContentService,
  type ContentStorage,
  type ConversionResult,
  type FaxReportData,
  FILES,
} from '../../platform/content/index.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError, NotFoundError } from '../../platform/errors.js';
import { newUuid, uuidSortKey } from '../../platform/ids.js';
import type { ObjectRow, ObjectStore } from '../../platform/object-store/index.js';
import type { CreateObjectBody, UpdateObjectBody } from '../../platform/schema.js';
import { FaxContent } from './fax.content.js';
import * as repo from './fax.repository.js';
import {
  type FaxObject,
  REPORT_STATUSES,
  type ReportEntry,
  type ReportStatus,
  type UploadQuery,
} from './fax.schema.js';

export interface FaxServiceDeps extends ContentObjectsDeps {
  /** Fax pages a month the user's feature packs allow (spec "Feature packs" quota.fax). */
  readonly faxPageQuota?: (db: Db, user: string) => Promise<number>;
}

/** The type fields kept in the object row. */
interface FaxData {
  /** Content version (storage prefix) holding fax.tif and its page index. */
  content?: string;
  page_count?: number;
  x_res?: number;
  y_res?: number;
}

/** A report as telephony gives it: the entry fields, and what the report PDF shows besides. */
export interface NewFaxReport {
  incoming: boolean;
  from: string;
  to: string;
  time_start: number;
  time_end?: number;
  status: ReportStatus;
  sip_status_code?: number;
  fax_error_code?: number;
  /** Pages transmitted (report PDF; default: the fax's page count). */
  page_count?: number;
  fax_ident?: string;
  fax_header?: string;
}

/** A report row as clients see it (also the received fax's: fax.incoming.ts). */
export function toEntry(row: repo.ReportRow): ReportEntry {
  return {
    incoming: row.incoming === 1,
    from: row.from_number,
    to: row.to_number,
    time_start: row.time_start,
    ...(row.time_end === null ? {} : { time_end: row.time_end }),
    status: row.status as ReportStatus,
    ...(row.sip_status_code === null ? {} : { sip_status_code: row.sip_status_code }),
    ...(row.fax_error_code === null ? {} : { fax_error_code: row.fax_error_code }),
  };
}

export class FaxService {
  private readonly store: ObjectStore;
  private readonly content: ContentService;
  private readonly files: FaxContent;
  /** The object calls; fax.incoming.ts makes received faxes with them. */
  readonly objects: ContentObjects<FaxData>;

  constructor(deps: FaxServiceDeps) {
    this.store = deps.store;
    this.content = deps.content;
    this.files = new FaxContent(deps.content);
    // Purge removes the pages; the reports cascade with the object row.
    this.objects = new ContentObjects<FaxData>(deps, {
      type: 'fax',
      wrong: 'wrong-fax',
      conversions: ['fax'],
      files: () => [FILES.faxTiff, FILES.faxIndex],
      // A fax of more pages than the owner may send in a month could never be sent
      // (3,000 pages accepted with a pack of 50): quota-exceeded, nothing stored.
      checkInput: async (db, owner, probe) => {
        if (!deps.faxPageQuota || probe.page_count === undefined) return;
        if (probe.page_count > (await deps.faxPageQuota(db, owner)))
          throw new ApiError('quota-exceeded', 'more pages than the fax quota allows a month');
      },
      converted: (_current, content, metadata) =>
        content
          ? {
              content,
              page_count: metadata.page_count ?? 0,
              x_res: metadata.x_res ?? 0,
              y_res: metadata.y_res ?? 0,
            }
          : {},
      convertEvent: (fax, status, data) => ({
        fax,
        status,
        ...(data.content ? { page_count: data.page_count } : {}),
      }),
    });
  }

  /** Where the pages and files are (for streaming downloads). */
  get storage(): ContentStorage {
    return this.objects.storage;
  }

  /** POST /api/fax: a fax to be sent, without content (status empty), in the owner's tag_outbox. */
  createFax(user: string, body: CreateObjectBody): Promise<string> {
    return this.objects.create(user, body.description, {}, (tags) => [tags.tag_outbox]);
  }

  async getFax(user: string, uuid: string): Promise<FaxObject> {
    const { object, data } = await this.objects.read(user, uuid);
    const reports = await repo.listReports(this.store.db, uuid);
    return {
      ...object,
      ...(data.content
        ? { page_count: data.page_count ?? 0, x_res: data.x_res ?? 0, y_res: data.y_res ?? 0 }
        : {}),
      report: Object.fromEntries(reports.map((report) => [report.uuid, toEntry(report)])),
    };
  }

  updateFax(user: string, uuid: string, body: UpdateObjectBody): Promise<void> {
    return this.objects.update(user, uuid, body.description);
  }

  /** Conventions 9; purge removes the pages and the reports too. */
  deleteFax(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.objects.remove(user, uuid, purge);
  }

  /**
   * POST /api/fax/{uuid}/{xxx}.pdf: the PDF is stored and checked (too-large, malformed-file:
   * the fax keeps its content), the fax shows `convert`, and the pages are made in the
   * background. A received fax, or one being or already transmitted, is wrong-state. The upload
   * must fit into the owner's free storage volume (quota-exceeded).
   */
  uploadPdf(user: string, uuid: string, body: unknown, options: UploadQuery): Promise<void> {
    return this.objects.upload(user, uuid, 'fax', body, {
      options,
      check: (db, row) => this.checkChangeable(db, row),
    });
  }

  /** Spec: wrong-state for an incoming fax or one already transmitted (or being sent). */
  private async checkChangeable(db: Db, row: ObjectRow): Promise<void> {
    if (row.status === 'record') throw new ApiError('wrong-state', 'the fax is being received');
    const fixing = await repo.findFixingReport(db, row.uuid);
    if (fixing) {
      throw new ApiError('wrong-state', fixing.incoming === 1 ? 'incoming fax' : 'fax already transmitted');
    }
  }

  /** Storage key of one page as PNG (1-based); NotFoundError (HTTP 404) when there is none. */
  async pageKey(user: string, uuid: string, page: number): Promise<string> {
    return this.files.pageKey(await this.objects.currentContent(user, uuid), page);
  }

  async pdfKey(user: string, uuid: string): Promise<string> {
    return this.files.pdfKey(await this.objects.currentContent(user, uuid));
  }

  async tiffKey(user: string, uuid: string): Promise<string> {
    return this.files.tiffKey(await this.objects.currentContent(user, uuid));
  }

  /**
   * GET /api/fax/{fax-uuid}/report/{report-uuid}/{xxx}.pdf: the report rendered from its data in
   * the session's language, with the fax's first page when it has content.
   */
  async reportPdf(user: string, uuid: string, report: string, language: string): Promise<Uint8Array> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.objects.definition);
    const entry = await repo.findReport(db, uuid, report);
    if (!entry) throw new NotFoundError();
    const data = this.store.dataOf<FaxData>(row);
    const pageCount = entry.page_count ?? data.page_count;
    const report_: FaxReportData = {
      language: language === 'en' ? 'en' : 'de',
      fax: uuid,
      report,
      ...(row.description === '' ? {} : { description: row.description }),
      ...toEntry(entry),
      ...(pageCount === undefined ? {} : { page_count: pageCount }),
      ...(entry.fax_ident === null ? {} : { fax_ident: entry.fax_ident }),
      ...(entry.fax_header === null ? {} : { fax_header: entry.fax_header }),
    };
    return this.files.reportPdf(report_, data.content);
  }

  /**
   * Adds a report to a fax (telephony: a transmission or reception); fax_report with the new
   * entry to the fax's readers. Answers the report UUID; wrong-fax when there is no such fax.
   */
  addReport(uuid: string, entry: NewFaxReport): Promise<string> {
    return this.store.write((w) => this.addReportIn(w, uuid, entry));
  }

  /** addReport inside a write of the caller (the send adds its report with its job). */
  async addReportIn(w: UnitOfWork, uuid: string, entry: NewFaxReport): Promise<string> {
    if (!(REPORT_STATUSES as readonly string[]).includes(entry.status))
      throw new ApiError('wrong-syntax', `unknown report status ${entry.status}`);
    const row = await this.faxRow(w.trx, uuid);
    if (!row) throw new ApiError('wrong-fax', 'unknown fax');
    const report = newUuid();
    const stored: repo.ReportRow = {
      uuid: report,
      fax: uuid,
      sort_key: uuidSortKey(report),
      incoming: entry.incoming ? 1 : 0,
      from_number: entry.from,
      to_number: entry.to,
      time_start: entry.time_start,
      time_end: entry.time_end ?? null,
      status: entry.status,
      sip_status_code: entry.sip_status_code ?? null,
      fax_error_code: entry.fax_error_code ?? null,
      page_count: entry.page_count ?? null,
      fax_ident: entry.fax_ident ?? null,
      fax_header: entry.fax_header ?? null,
    };
    await repo.insertReport(w.trx, stored);
    w.emit(await this.store.readers(w.trx, row), 'fax_report', {
      fax: uuid,
      report: { [report]: toEntry(stored) },
    });
    return report;
  }

  /**
   * Changes a report as its transmission moves on; fax_report with the changed entry to the
   * fax's readers. False when the report is gone (its fax was purged).
   */
  async changeReport(
    w: UnitOfWork,
    uuid: string,
    report: string,
    changes: repo.ReportChanges,
  ): Promise<boolean> {
    const row = await this.faxRow(w.trx, uuid);
    if (!row) return false;
    await repo.updateReport(w.trx, report, changes);
    const stored = await repo.findReport(w.trx, uuid, report);
    if (!stored) return false;
    w.emit(await this.store.readers(w.trx, row), 'fax_report', {
      fax: uuid,
      report: { [report]: toEntry(stored) },
    });
    return true;
  }

  /** The fax's object row, whoever asks; undefined when there is no such fax. */
  private async faxRow(db: Db, uuid: string): Promise<ObjectRow | undefined> {
    const owner = await this.objects.ownerOf(db, uuid);
    if (!owner) return undefined;
    return (await this.store.getForRead(db, owner, uuid, this.objects.definition)).row;
  }

  /**
   * The fax `user` may send (POST /api/fax/{uuid}/send): wrong-fax, access-denied without write
   * access; its content version and pages, or no-content while it has none (empty, convert,
   * fail, record).
   */
  async sendable(db: Db, user: string, uuid: string): Promise<{ content: string; pages: number }> {
    const { row } = await this.store.getForWrite(db, user, uuid, this.objects.definition);
    const data = this.store.dataOf<FaxData>(row);
    if (row.status !== 'ok' || !data.content || !data.page_count)
      throw new ApiError('no-content', 'the fax has no pages to send');
    return { content: data.content, pages: data.page_count };
  }

  /** A fax conversion finished (ContentObjects.handleConversion; tests call it directly). */
  handleConversion(result: ConversionResult): Promise<void> {
    return this.objects.receive(result);
  }
}
