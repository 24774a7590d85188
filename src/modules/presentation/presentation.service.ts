/**
 * Presentations (spec "Presentation", Resources "Presentation"): an object type of the store
 * whose content is a PDF, converted in the background into one PNG per slide while the
 * original is kept (decisions.md "Content and conversion"). Access, tags, trash and object
 * events come from the object store; the live part (control, subscriptions) is
 * PresentationLiveService.
 */
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import {
  type ContentService,
  type ContentStorage,
  type ConversionResult,
  FILES,
} from '../../platform/content/index.js';
import { ApiError } from '../../platform/errors.js';
import type { ObjectRow, ObjectStore, ObjectTypeDefinition } from '../../platform/object-store/index.js';
import * as repo from './presentation.repository.js';
import type {
  CreatePresentationBody,
  PresentationObject,
  UpdatePresentationBody,
} from './presentation.schema.js';
import { PRESENTATION, type PresentationData } from './presentation.type.js';
import type { PresentationLiveService } from './presentation-live.service.js';

export interface PresentationServiceDeps {
  readonly store: ObjectStore;
  readonly content: ContentService;
  readonly live: PresentationLiveService;
  readonly log: FastifyBaseLogger;
}

type Status = PresentationObject['status'];

export class PresentationService {
  readonly definition: ObjectTypeDefinition;
  private readonly store: ObjectStore;
  private readonly content: ContentService;
  private readonly live: PresentationLiveService;

  constructor(private readonly deps: PresentationServiceDeps) {
    this.store = deps.store;
    this.content = deps.content;
    this.live = deps.live;
    this.definition = this.store.defineType({
      ...PRESENTATION,
      // Runs inside the purging transaction; the content goes once it is over (never awaited
      // here: on SQLite the transaction holds the only connection).
      onPurge: async (_trx, row) => {
        void this.removeContent(row.uuid);
      },
    });
    this.content.onConversion('presentation', (result) => this.handleConversion(result));
  }

  /** Where the slides and PDFs are (for streaming downloads). */
  get storage(): ContentStorage {
    return this.content.storage;
  }

  createPresentation(user: string, body: CreatePresentationBody): Promise<string> {
    return this.store.write(async (w) => {
      const row = await this.store.createObject(w, {
        type: PRESENTATION.type,
        owner: user,
        description: body.description ?? '',
        status: 'empty',
        data: {} satisfies PresentationData,
      });
      return row.uuid;
    });
  }

  async getPresentation(user: string, uuid: string): Promise<PresentationObject> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.definition);
    const base = await this.store.describe(db, user, row);
    const data = this.store.dataOf<PresentationData>(row);
    return {
      owner: base.owner,
      time: base.time,
      description: base.description,
      ...(data.page_count === undefined ? {} : { page_count: data.page_count }),
      busy: await this.live.isBusy(db, uuid),
      status: (row.status ?? 'empty') as Status,
      tag: base.tag,
    };
  }

  updatePresentation(user: string, uuid: string, body: UpdatePresentationBody): Promise<void> {
    return this.store.write(async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      if (row.description === body.description) return;
      await this.store.updateObject(w, row, { description: body.description }, user);
    });
  }

  /** Conventions 9. A started presentation stops first; its subscribers hear so. */
  deletePresentation(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.store.write(async (w) => {
      const found = await this.store.getForRead(w.trx, user, uuid, this.definition);
      await this.live.endForDeletion(w, uuid);
      await this.store.deleteObject(w, user, found, purge);
    });
  }

  /**
   * POST /api/presentation/{uuid}/{xxx}.pdf: the PDF is stored and checked (too-large,
   * malformed-file: the presentation keeps its content), the object shows `convert`, and the
   * slides are made in the background.
   */
  async uploadPdf(user: string, uuid: string, body: unknown): Promise<void> {
    await this.store.getForWrite(this.store.db, user, uuid, this.definition);
    const stream = body as Readable | undefined;
    if (!stream || typeof stream.pipe !== 'function') throw new ApiError('malformed-file', 'no content');
    const prepared = await this.content.prepareConversion('presentation', uuid, { stream });
    try {
      await this.store.write(async (w) => {
        const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
        await this.content.recordConversion(w.trx, prepared);
        await this.store.updateObject(w, row, { status: 'convert' }, user);
      });
    } catch (error) {
      await this.content.discardConversion(prepared);
      throw error;
    }
    this.content.startConversion(prepared);
  }

  /** Storage key of one slide (1-based); NotFoundError (HTTP 404) when there is none. */
  async slideKey(user: string, uuid: string, page: number): Promise<string> {
    const content = await this.currentContent(user, uuid);
    return this.content.slideKey(content, page);
  }

  /** Storage key of the original PDF. */
  async pdfKey(user: string, uuid: string): Promise<string> {
    const content = await this.currentContent(user, uuid);
    return this.content.presentationPdfKey(content);
  }

  private async currentContent(user: string, uuid: string): Promise<string> {
    const { row } = await this.store.getForRead(this.store.db, user, uuid, this.definition);
    const { content } = this.store.dataOf<PresentationData>(row);
    if (!content) throw new ApiError('wrong-presentation', 'no content');
    return content;
  }

  /**
   * A conversion finished: ok switches the presentation to the new slides, empty and fail leave
   * it without content. object_modify and presentation_convert go to its readers. A result
   * beyond the owner's storage quota counts as fail. Idempotent, as the content service needs.
   */
  async handleConversion(result: ConversionResult): Promise<void> {
    const owner = await repo.findPresentationOwner(this.store.db, result.objectUuid);
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
        this.deps.log.warn({ presentation: result.objectUuid }, 'converted slides exceed the storage quota');
        await this.content.deleteContent(result.content);
      }
    }
    await this.applyConversion(owner, result, result.status === 'empty' ? 'empty' : 'fail');
  }

  private async applyConversion(owner: string, result: ConversionResult, status: Status): Promise<void> {
    const uuid = result.objectUuid;
    const pageCount = result.metadata.page_count ?? 0;
    const newContent = status === 'ok' ? result.content : undefined;
    const bytes = newContent ? await this.contentBytes(newContent, pageCount) : 0;
    let old: string | undefined;
    await this.store.write(async (w) => {
      let found: Awaited<ReturnType<ObjectStore['getForRead']>>;
      try {
        found = await this.store.getForRead(w.trx, owner, uuid, this.definition);
      } catch {
        return; // purged meanwhile
      }
      old = this.store.dataOf<PresentationData>(found.row).content;
      const data: PresentationData = newContent ? { page_count: pageCount, content: newContent } : {};
      const row: ObjectRow = await this.store.updateObject(
        w,
        found.row,
        { status, data, contentBytes: bytes },
        undefined,
      );
      if (newContent) await this.live.contentChanged(w, uuid, pageCount);
      w.emit(await this.store.readers(w.trx, row), 'presentation_convert', {
        presentation: uuid,
        status,
        ...(newContent ? { page_count: pageCount } : {}),
      });
    });
    if (old && old !== newContent) await this.content.deleteContent(old);
  }

  /** Bytes of a content version: the slides and the original PDF (for the storage volume). */
  private async contentBytes(content: string, pageCount: number): Promise<number> {
    let total = 0;
    const keys = [await this.content.presentationPdfKey(content)];
    for (let page = 1; page <= pageCount; page++) keys.push(this.content.key(content, FILES.slide(page)));
    for (const key of keys) total += (await this.storage.stat(key))?.size ?? 0;
    return total;
  }

  private async removeContent(uuid: string): Promise<void> {
    try {
      await this.content.cancelConversions(uuid);
      await this.content.deleteContent(`${uuid}/`);
    } catch (error) {
      this.deps.log.error({ err: error, presentation: uuid }, 'content of a purged presentation not removed');
    }
  }
}
