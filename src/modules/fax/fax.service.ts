/**
 * Faxes (spec "Fax", Resources "Fax"): an object type of the store whose content is fax pages
 * (decisions.md "Content and conversion": a multi-page CCITT G4 TIFF at 204x196 dpi), made in
 * the background from an uploaded PDF. Access, tags, trash and object events come from the
 * object store; reports are rows of their own, added by telephony (addReport). Sending comes
 * with telephony.
 */
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import {
  type ContentService,
  type ContentStorage,
  type ConversionResult,
  type FaxReportData,
  FILES,
  type PreparedConversion,
} from '../../platform/content/index.js';
import type { Db } from '../../platform/database/database.js';
import { ApiError, NotFoundError } from '../../platform/errors.js';
import { newUuid, uuidSortKey } from '../../platform/ids.js';
import type {
  AccessedObject,
  ObjectRow,
  ObjectStore,
  ObjectTypeDefinition,
} from '../../platform/object-store/index.js';
import * as repo from './fax.repository.js';
import {
  type CreateFaxBody,
  type FaxObject,
  type FaxStatus,
  REPORT_STATUSES,
  type ReportEntry,
  type ReportStatus,
  type UpdateFaxBody,
  type UploadQuery,
} from './fax.schema.js';

export interface FaxServiceDeps {
  readonly store: ObjectStore;
  readonly content: ContentService;
  readonly log: FastifyBaseLogger;
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

function toEntry(row: repo.ReportRow): ReportEntry {
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
  readonly definition: ObjectTypeDefinition;
  private readonly store: ObjectStore;
  private readonly content: ContentService;

  constructor(private readonly deps: FaxServiceDeps) {
    this.store = deps.store;
    this.content = deps.content;
    this.definition = this.store.defineType({
      type: 'fax',
      wrong: 'wrong-fax',
      // Runs inside the purging transaction; the content goes once it is over (never awaited
      // here: on SQLite the transaction holds the only connection). Reports cascade.
      onPurge: async (_trx, row) => {
        void this.removeContent(row.uuid);
      },
    });
    this.content.onConversion('fax', (result) => this.handleConversion(result));
  }

  /** Where the pages and files are (for streaming downloads). */
  get storage(): ContentStorage {
    return this.content.storage;
  }

  /** POST /api/fax: a fax to be sent, without content (status empty), in the owner's tag_outbox. */
  createFax(user: string, body: CreateFaxBody): Promise<string> {
    return this.store.write(async (w) => {
      const tags = await this.store.userTags(w.trx, user);
      const row = await this.store.createObject(w, {
        type: 'fax',
        owner: user,
        description: body.description ?? '',
        status: 'empty',
        data: {} satisfies FaxData,
        tags: [tags.tag_outbox],
      });
      return row.uuid;
    });
  }

  async getFax(user: string, uuid: string): Promise<FaxObject> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.definition);
    const base = await this.store.describe(db, user, row);
    const data = this.store.dataOf<FaxData>(row);
    const reports = await repo.listReports(db, uuid);
    return {
      owner: base.owner,
      time: base.time,
      description: base.description,
      ...(data.content
        ? { page_count: data.page_count ?? 0, x_res: data.x_res ?? 0, y_res: data.y_res ?? 0 }
        : {}),
      status: (row.status ?? 'empty') as FaxStatus,
      tag: base.tag,
      report: Object.fromEntries(reports.map((report) => [report.uuid, toEntry(report)])),
    };
  }

  updateFax(user: string, uuid: string, body: UpdateFaxBody): Promise<void> {
    return this.store.write(async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      if (row.description === body.description) return;
      await this.store.updateObject(w, row, { description: body.description }, user);
    });
  }

  /** Conventions 9; purge removes the pages and the reports too. */
  deleteFax(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.store.write(async (w) => {
      const found = await this.store.getForRead(w.trx, user, uuid, this.definition);
      await this.store.deleteObject(w, user, found, purge);
    });
  }

  /**
   * POST /api/fax/{uuid}/{xxx}.pdf: the PDF is stored and checked (too-large, malformed-file:
   * the fax keeps its content), the fax shows `convert`, and the pages are made in the
   * background. A received fax, or one being or already transmitted, is wrong-state. The upload
   * must fit into the owner's free storage volume (quota-exceeded).
   */
  async uploadPdf(user: string, uuid: string, body: unknown, options: UploadQuery): Promise<void> {
    const { row } = await this.store.getForWrite(this.store.db, user, uuid, this.definition);
    await this.checkChangeable(this.store.db, row);
    const stream = body as Readable | undefined;
    if (!stream || typeof stream.pipe !== 'function') throw new ApiError('malformed-file', 'no content');
    const prepared = await this.content.prepareConversion('fax', uuid, { stream }, options);
    try {
      const size = await this.uploadSize(prepared);
      await this.store.write(async (w) => {
        const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
        await this.checkChangeable(w.trx, row);
        await this.store.checkQuota(w.trx, row.owner, size);
        await this.content.recordConversion(w.trx, prepared);
        await this.store.updateObject(w, row, { status: 'convert' }, user);
      });
    } catch (error) {
      await this.content.discardConversion(prepared);
      throw error;
    }
    this.content.startConversion(prepared);
  }

  /** Spec: wrong-state for an incoming fax or one already transmitted (or being sent). */
  private async checkChangeable(db: Db, row: ObjectRow): Promise<void> {
    if (row.status === 'record') throw new ApiError('wrong-state', 'the fax is being received');
    const fixing = await repo.findFixingReport(db, row.uuid);
    if (fixing) {
      throw new ApiError('wrong-state', fixing.incoming === 1 ? 'incoming fax' : 'fax already transmitted');
    }
  }

  private async uploadSize(prepared: PreparedConversion): Promise<number> {
    if (!('file' in prepared.input)) return 0;
    const stat = await this.storage.stat(this.content.key(prepared.content, prepared.input.file));
    return stat?.size ?? 0;
  }

  /** Storage key of one page as PNG (1-based); NotFoundError (HTTP 404) when there is none. */
  async pageKey(user: string, uuid: string, page: number): Promise<string> {
    return this.content.faxPageKey(await this.currentContent(user, uuid), page);
  }

  async pdfKey(user: string, uuid: string): Promise<string> {
    return this.content.faxPdfKey(await this.currentContent(user, uuid));
  }

  async tiffKey(user: string, uuid: string): Promise<string> {
    return this.content.faxTiffKey(await this.currentContent(user, uuid));
  }

  private async currentContent(user: string, uuid: string): Promise<string> {
    const { row } = await this.store.getForRead(this.store.db, user, uuid, this.definition);
    const { content } = this.store.dataOf<FaxData>(row);
    if (!content) throw new NotFoundError();
    return content;
  }

  /**
   * GET /api/fax/{fax-uuid}/report/{report-uuid}/{xxx}.pdf: the report rendered from its data in
   * the session's language, with the fax's first page when it has content.
   */
  async reportPdf(user: string, uuid: string, report: string, language: string): Promise<Uint8Array> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.definition);
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
    return this.content.faxReportPdf(report_, data.content);
  }

  /**
   * Adds a report to a fax (telephony: a transmission or reception); fax_report with the new
   * entry to the fax's readers. Answers the report UUID; wrong-fax when there is no such fax.
   */
  addReport(uuid: string, entry: NewFaxReport): Promise<string> {
    if (!(REPORT_STATUSES as readonly string[]).includes(entry.status)) {
      return Promise.reject(new ApiError('wrong-syntax', `unknown report status ${entry.status}`));
    }
    return this.store.write(async (w) => {
      const owner = await repo.findFaxOwner(w.trx, uuid);
      if (!owner) throw new ApiError('wrong-fax', 'unknown fax');
      const { row } = await this.store.getForRead(w.trx, owner, uuid, this.definition);
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
    });
  }

  /**
   * A conversion finished: ok switches the fax to the new pages, empty and fail leave it without
   * content. object_modify and fax_convert go to its readers. A result beyond the owner's storage
   * quota counts as fail. Idempotent, as the content service needs.
   */
  async handleConversion(result: ConversionResult): Promise<void> {
    const owner = await repo.findFaxOwner(this.store.db, result.objectUuid);
    if (!owner) {
      if (result.content) await this.content.deleteContent(result.content);
      return;
    }
    if (result.status === 'ok' && result.content) {
      try {
        await this.applyConversion(owner, result, 'ok');
        return;
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 'quota-exceeded')) throw error;
        this.deps.log.warn({ fax: result.objectUuid }, 'converted fax exceeds the storage quota');
        await this.content.deleteContent(result.content);
      }
    }
    await this.applyConversion(owner, result, result.status === 'empty' ? 'empty' : 'fail');
  }

  private async applyConversion(owner: string, result: ConversionResult, status: FaxStatus): Promise<void> {
    const uuid = result.objectUuid;
    const newContent = status === 'ok' ? result.content : undefined;
    const bytes = newContent ? await this.contentBytes(newContent) : 0;
    let old: string | undefined;
    await this.store.write(async (w) => {
      let found: AccessedObject;
      try {
        found = await this.store.getForRead(w.trx, owner, uuid, this.definition);
      } catch {
        return; // purged meanwhile
      }
      old = this.store.dataOf<FaxData>(found.row).content;
      const data: FaxData = newContent
        ? {
            content: newContent,
            page_count: result.metadata.page_count ?? 0,
            x_res: result.metadata.x_res ?? 0,
            y_res: result.metadata.y_res ?? 0,
          }
        : {};
      const row = await this.store.updateObject(
        w,
        found.row,
        { status, data, contentBytes: bytes },
        undefined,
      );
      w.emit(await this.store.readers(w.trx, row), 'fax_convert', {
        fax: uuid,
        status,
        ...(newContent ? { page_count: data.page_count } : {}),
      });
    });
    if (old && old !== newContent) await this.content.deleteContent(old);
  }

  /** Bytes of a content version (the pages and their index) for the storage volume. */
  private async contentBytes(content: string): Promise<number> {
    let total = 0;
    for (const file of [FILES.faxTiff, FILES.faxIndex]) {
      total += (await this.storage.stat(this.content.key(content, file)))?.size ?? 0;
    }
    return total;
  }

  private async removeContent(uuid: string): Promise<void> {
    try {
      await this.content.cancelConversions(uuid);
      await this.content.deleteContent(`${uuid}/`);
    } catch (error) {
      this.deps.log.error({ err: error, fax: uuid }, 'content of a purged fax not removed');
    }
  }
}
