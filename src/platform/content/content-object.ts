/**
 * What the object types with converted content share (decisions.md "Content and conversion";
 * spec Resources "Fax", "Announcement", "Recording", "Presentation"): each is an object of the
 * store whose type fields name its current content version, made in the background from an
 * upload. ContentObjects does for one such type what does not depend on the type: the object
 * calls, an upload (stored and checked, then quota, job and status convert in one transaction,
 * the job started after the commit), the switch to a conversion result, download keys and the
 * removal of the content when the object is purged. The type gives its fields, files and event.
 */

import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../database/database.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import { ApiError, type ApiStatus, NotFoundError } from '../errors.js';
import type {
  AccessedObject,
  ObjectRow,
  ObjectStore,
  ObjectTypeDefinition,
  UserTags,
} from '../object-store/index.js';
import type { ContentStatus } from '../schema.js';
import type { ContentService } from './content-service.js';
import {
  type ConversionInput,
  type ConversionKind,
  type ConversionOptions,
  type ConversionResult,
  type ConversionStatus,
  type InputProbe,
  MAX_JOBS_PER_USER,
  type PreparedConversion,
} from './content-types.js';
import type { ContentStorage } from './storage.js';

/** The type field every content object keeps. */
export interface ContentData {
  /** Content version (storage prefix) holding the converted files; absent without content. */
  content?: string;
}

type Metadata = ConversionResult['metadata'];

/** What one type with content declares (its name, files, fields and event). */
export interface ContentObjectType<D extends ContentData> {
  readonly type: string;
  /** Status for an object of this type that the user cannot read (Conventions 14). */
  readonly wrong: ApiStatus;
  /** The converters this type's content goes through; their results come back to it. */
  readonly conversions: readonly ConversionKind[];
  /**
   * The status of an upload that does not fit into the owner's free volume (pending uploads
   * counted): quota-exceeded by default; a type whose call lists no quota status names another.
   */
  readonly uploadQuotaStatus?: ApiStatus;
  /** The type's own bound on what the upload holds (pages, seconds), in the recording transaction. */
  checkInput?(db: Db, owner: string, probe: InputProbe): Promise<void>;
  /** Files of a content version (FILES names) that count toward the owner's storage volume. */
  files(metadata: Metadata): readonly string[];
  /** The type fields after a conversion: with `content` (ok) or without it (empty, fail). */
  converted(current: D, content: string | undefined, metadata: Metadata): D;
  /** More work in the switching transaction when new content arrived, before the event. */
  onNewContent?(w: UnitOfWork, uuid: string, data: D): Promise<void>;
  /** Payload of `<type>_convert` to the object's readers; the type sends none without it. */
  convertEvent?(uuid: string, status: ConversionStatus, data: D): Record<string, unknown>;
}

export interface ContentObjectsDeps {
  readonly store: ObjectStore;
  readonly content: ContentService;
  readonly log: FastifyBaseLogger;
}

/** A type's own rule on whether its content may change now (a transmitted fax's may not). */
export type ChangeCheck = (db: Db, row: ObjectRow) => Promise<void>;

/** The fields every object shows (the response schemas order them). */
export interface ShownObject {
  owner: string;
  time: number;
  description: string;
  status: ContentStatus;
  tag: string[];
}

/**
 * The owner of an object of `type` (conversion results and telephony carry no user). A query of
 * its own: the object store looks objects up for a user only.
 */
async function findOwner(db: Db, type: string, uuid: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('object')
    .select('owner')
    .where('uuid', '=', uuid)
    .where('type', '=', type)
    .executeTakeFirst();
  return row?.owner;
}

export class ContentObjects<D extends ContentData> {
  readonly definition: ObjectTypeDefinition;
  private readonly store: ObjectStore;
  private readonly content: ContentService;
  private readonly log: FastifyBaseLogger;

  constructor(
    deps: ContentObjectsDeps,
    private readonly type: ContentObjectType<D>,
  ) {
    this.store = deps.store;
    this.content = deps.content;
    this.log = deps.log;
    this.definition = this.store.defineType({
      type: type.type,
      wrong: type.wrong,
      // Files go only once the purge has committed: a rolled-back purge keeps its content.
      onPurge: async (w, row) => {
        w.afterCommit(() => this.removeContent(row.uuid));
      },
    });
    this.content.registerType(type.type, {
      conversions: type.conversions,
      handle: (result) => this.receive(result),
      currentContent: (uuid) => this.contentOf(uuid),
    });
  }

  /** Where the content files are (for streaming downloads). */
  get storage(): ContentStorage {
    return this.content.storage;
  }

  ownerOf(db: Db, uuid: string): Promise<string | undefined> {
    return findOwner(db, this.type.type, uuid);
  }

  /** The object's content version (null without one); undefined when there is no such object. */
  private async contentOf(uuid: string): Promise<string | null | undefined> {
    const row = await this.store.db
      .selectFrom('object')
      .select('data')
      .where('uuid', '=', uuid)
      .where('type', '=', this.type.type)
      .executeTakeFirst();
    if (!row) return undefined;
    return (JSON.parse(row.data) as ContentData).content ?? null;
  }

  // ---------------------------------------------------------------- object calls

  /** A new object of `user` without content (status empty; object_new), in `tags` of its owner too. */
  create(
    user: string,
    description: string | undefined,
    data: D,
    tags?: (own: UserTags) => string[],
  ): Promise<string> {
    return this.store.write(async (w) => {
      const row = await this.store.createObject(w, {
        type: this.type.type,
        owner: user,
        description: description ?? '',
        status: 'empty',
        data,
        ...(tags ? { tags: tags(await this.store.userTags(w.trx, user)) } : {}),
      });
      return row.uuid;
    });
  }

  /** The object as `user` sees it: the shared fields and the type fields. */
  async read(user: string, uuid: string): Promise<{ object: ShownObject; data: D }> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.definition);
    const base = await this.store.describe(db, user, row);
    return {
      object: { ...base, status: (row.status ?? 'empty') as ContentStatus },
      data: this.store.dataOf<D>(row),
    };
  }

  /** A new description (object_modify; none when it is the same). */
  update(user: string, uuid: string, description: string): Promise<void> {
    return this.store.write(async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      if (row.description === description) return;
      await this.store.updateObject(w, row, { description }, user);
    });
  }

  /** Conventions 9; `before` runs first in the same transaction. Purge removes the content too. */
  remove(
    user: string,
    uuid: string,
    purge: boolean,
    before?: (w: UnitOfWork) => Promise<void>,
  ): Promise<void> {
    return this.store.write(async (w) => {
      const found = await this.store.getForRead(w.trx, user, uuid, this.definition);
      await before?.(w);
      await this.store.deleteObject(w, user, found, purge);
    });
  }

  // ---------------------------------------------------------------- conversion

  /**
   * An upload route's raw body converted into new content (see convert); malformed-file when
   * there is no body.
   */
  upload(
    user: string,
    uuid: string,
    kind: ConversionKind,
    body: unknown,
    extra: { options?: ConversionOptions; check?: ChangeCheck } = {},
  ): Promise<void> {
    return this.convert(
      user,
      uuid,
      kind,
      () => {
        const stream = body as Readable | undefined;
        if (!stream || typeof stream.pipe !== 'function') throw new ApiError('malformed-file', 'no content');
        return { stream };
      },
      extra,
    );
  }

  /**
   * New content from `input` (taken once the user may write the object and `check` passed):
   * the input is stored and checked (too-large, malformed-file: the object keeps its content)
   * and, with the uploads of the owner's other unfinished conversions, must fit into the owner's
   * free storage volume (quota-exceeded, or the type's uploadQuotaStatus); at most
   * MAX_JOBS_PER_USER objects of one owner convert at a time (exceeded-limit); then the object
   * shows `convert` and the conversion runs in the background, superseding an older one of the
   * object.
   */
  async convert(
    user: string,
    uuid: string,
    kind: ConversionKind,
    input: () => ConversionInput,
    extra: { options?: ConversionOptions; check?: ChangeCheck } = {},
  ): Promise<void> {
    const { check, options } = extra;
    const { row } = await this.store.getForWrite(this.store.db, user, uuid, this.definition);
    await check?.(this.store.db, row);
    const prepared = await this.content.prepareConversion(this.type.type, kind, uuid, input(), options);
    await this.record(prepared, async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      await check?.(w.trx, row);
      await this.type.checkInput?.(w.trx, row.owner, prepared.probe);
      // The object's own older job is superseded by this one; the others stay pending.
      const pending = (await this.content.pendingUploads(w.trx, row.owner)).filter(
        (job) => job.objectUuid !== uuid,
      );
      if (pending.length >= MAX_JOBS_PER_USER)
        throw new ApiError('exceeded-limit', 'too many conversions pending');
      const size = prepared.size + pending.reduce((sum, job) => sum + job.size, 0);
      try {
        await this.store.checkQuota(w.trx, row.owner, size);
      } catch (error) {
        const status = this.type.uploadQuotaStatus;
        if (status && error instanceof ApiError && error.status === 'quota-exceeded')
          throw new ApiError(status, 'storage volume quota exceeded');
        throw error;
      }
      await this.store.updateObject(w, row, { status: 'convert' }, user);
    });
  }

  /**
   * Records a prepared job in one transaction with `change` and starts it after the commit; a
   * failed transaction discards the stored input.
   */
  async record(prepared: PreparedConversion, change: (w: UnitOfWork) => Promise<void>): Promise<void> {
    try {
      await this.store.write(async (w) => {
        await change(w);
        await this.content.recordConversion(w.trx, prepared);
      });
    } catch (error) {
      await this.content.discardConversion(prepared);
      throw error;
    }
    this.content.startConversion(prepared);
  }

  /**
   * A conversion finished: ok switches the object to the new content, empty and fail leave it
   * without content; object_modify and the type's convert event go to its readers. A result
   * beyond the owner's storage quota counts as fail. Answers false when the object is not of
   * this type (or gone). Idempotent, as the content service needs.
   */
  async handleConversion(result: ConversionResult): Promise<boolean> {
    const owner = await this.ownerOf(this.store.db, result.objectUuid);
    if (!owner) return false;
    if (result.status === 'ok' && result.content) {
      try {
        await this.applyConversion(owner, result, 'ok');
        return true;
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 'quota-exceeded')) throw error;
        const { type } = this.type;
        this.log.warn({ [type]: result.objectUuid }, `converted ${type} exceeds the storage quota`);
        await this.content.deleteContent(result.content);
      }
    }
    await this.applyConversion(owner, result, result.status === 'empty' ? 'empty' : 'fail');
    return true;
  }

  /** handleConversion as registered: the result of a gone object is deleted. */
  async receive(result: ConversionResult): Promise<void> {
    if (!(await this.handleConversion(result)) && result.content) {
      await this.content.deleteContent(result.content);
    }
  }

  private async applyConversion(owner: string, result: ConversionResult, status: ConversionStatus) {
    const uuid = result.objectUuid;
    const content = status === 'ok' ? result.content : undefined;
    const bytes = content ? await this.contentBytes(content, this.type.files(result.metadata)) : 0;
    let old: string | undefined;
    await this.store.write(async (w) => {
      let found: AccessedObject;
      try {
        found = await this.store.getForRead(w.trx, owner, uuid, this.definition);
      } catch {
        return; // purged meanwhile
      }
      const current = this.store.dataOf<D>(found.row);
      old = current.content;
      const data = this.type.converted(current, content, result.metadata);
      const row = await this.store.updateObject(
        w,
        found.row,
        { status, data, contentBytes: bytes },
        undefined,
      );
      if (content) await this.type.onNewContent?.(w, uuid, data);
      const payload = this.type.convertEvent?.(uuid, status, data);
      if (payload) w.emit(await this.store.readers(w.trx, row), `${this.type.type}_convert`, payload);
    });
    if (old && old !== content) await this.content.deleteContent(old);
  }

  /** Bytes of a content version's files, for the storage volume. */
  private async contentBytes(content: string, files: readonly string[]): Promise<number> {
    let total = 0;
    for (const file of files) total += (await this.storage.stat(this.content.key(content, file)))?.size ?? 0;
    return total;
  }

  // ---------------------------------------------------------------- downloads and purge

  /** The object's current content version; NotFoundError (HTTP 404) when it has none. */
  async currentContent(user: string, uuid: string): Promise<string> {
    const { row } = await this.store.getForRead(this.store.db, user, uuid, this.definition);
    const { content } = this.store.dataOf<D>(row);
    if (!content) throw new NotFoundError();
    return content;
  }

  private async removeContent(uuid: string): Promise<void> {
    try {
      await this.content.cancelConversions(uuid);
      await this.content.deleteContent(`${uuid}/`);
    } catch (error) {
      const { type } = this.type;
      this.log.error({ err: error, [type]: uuid }, `content of a purged ${type} not removed`);
    }
  }
}
