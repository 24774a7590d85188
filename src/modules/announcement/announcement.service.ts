/**
 * Announcements (spec "Announcement", Resources "Announcement"): an object type of the store
 * whose content is audio in telephony form (decisions.md "Content and conversion": 8 kHz mono,
 * downloadable as WAV and Ogg Vorbis), made in the background from an uploaded WAV or Ogg file
 * or by text2speech. Access, tags, trash and object events come from the object store.
 */
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import {
  type ContentService,
  type ContentStorage,
  type ConversionResult,
  FILES,
  type PreparedConversion,
} from '../../platform/content/index.js';
import { ApiError, NotFoundError } from '../../platform/errors.js';
import type { AccessedObject, ObjectStore, ObjectTypeDefinition } from '../../platform/object-store/index.js';
import * as repo from './announcement.repository.js';
import type {
  AnnouncementObject,
  AnnouncementStatus,
  CreateAnnouncementBody,
  Text2SpeechBody,
  UpdateAnnouncementBody,
} from './announcement.schema.js';

export interface AnnouncementServiceDeps {
  readonly store: ObjectStore;
  readonly content: ContentService;
  readonly log: FastifyBaseLogger;
}

/** The type fields kept in the object row. */
interface AnnouncementData {
  /** Content version (storage prefix) holding the WAV and Ogg files. */
  content?: string;
  /** Seconds of audio. */
  duration?: number;
}

export class AnnouncementService {
  readonly definition: ObjectTypeDefinition;
  private readonly store: ObjectStore;
  private readonly content: ContentService;

  constructor(private readonly deps: AnnouncementServiceDeps) {
    this.store = deps.store;
    this.content = deps.content;
    this.definition = this.store.defineType({
      type: 'announcement',
      wrong: 'wrong-announcement',
      // Runs inside the purging transaction; the content goes once it is over (never awaited
      // here: on SQLite the transaction holds the only connection).
      onPurge: async (_trx, row) => {
        void this.removeContent(row.uuid);
      },
    });
    // Uploaded audio is shared with recordings; the composition root hands those results on.
    this.content.onConversion('text2speech', async (result) => {
      if (!(await this.handleConversion(result)) && result.content) {
        await this.content.deleteContent(result.content);
      }
    });
  }

  /** Where the audio files are (for streaming downloads). */
  get storage(): ContentStorage {
    return this.content.storage;
  }

  createAnnouncement(user: string, body: CreateAnnouncementBody): Promise<string> {
    return this.store.write(async (w) => {
      const row = await this.store.createObject(w, {
        type: 'announcement',
        owner: user,
        description: body.description ?? '',
        status: 'empty',
        data: {} satisfies AnnouncementData,
      });
      return row.uuid;
    });
  }

  async getAnnouncement(user: string, uuid: string): Promise<AnnouncementObject> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.definition);
    const base = await this.store.describe(db, user, row);
    return {
      owner: base.owner,
      time: base.time,
      description: base.description,
      status: (row.status ?? 'empty') as AnnouncementStatus,
      tag: base.tag,
    };
  }

  updateAnnouncement(user: string, uuid: string, body: UpdateAnnouncementBody): Promise<void> {
    return this.store.write(async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      if (row.description === body.description) return;
      await this.store.updateObject(w, row, { description: body.description }, user);
    });
  }

  /** Conventions 9; purge removes the audio too. */
  deleteAnnouncement(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.store.write(async (w) => {
      const found = await this.store.getForRead(w.trx, user, uuid, this.definition);
      await this.store.deleteObject(w, user, found, purge);
    });
  }

  /**
   * POST /api/announcement/{uuid}/{xxx}.wav or .ogg: the file (WAV or Ogg Vorbis, whatever the
   * name says) is stored and checked (too-large, malformed-file: the announcement keeps its
   * audio) and must fit into the owner's free storage volume (quota-exceeded); the announcement
   * shows `convert` and the audio is converted in the background.
   */
  async uploadAudio(user: string, uuid: string, body: unknown): Promise<void> {
    await this.store.getForWrite(this.store.db, user, uuid, this.definition);
    const stream = body as Readable | undefined;
    if (!stream || typeof stream.pipe !== 'function') throw new ApiError('malformed-file', 'no content');
    const prepared = await this.content.prepareConversion('audio', uuid, { stream });
    await this.record(user, uuid, prepared, await this.uploadSize(prepared));
  }

  /** POST /api/announcement/{uuid}/text2speech: the text is spoken in the background. */
  async text2speech(user: string, uuid: string, body: Text2SpeechBody): Promise<void> {
    await this.store.getForWrite(this.store.db, user, uuid, this.definition);
    const prepared = await this.content.prepareConversion('text2speech', uuid, {
      text: body.text,
      locale: body.locale ?? 'de-DE',
    });
    await this.record(user, uuid, prepared, 0);
  }

  /** Records the job with the status change in one transaction, then starts it. */
  private async record(
    user: string,
    uuid: string,
    prepared: PreparedConversion,
    size: number,
  ): Promise<void> {
    try {
      await this.store.write(async (w) => {
        const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
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

  private async uploadSize(prepared: PreparedConversion): Promise<number> {
    if (!('file' in prepared.input)) return 0;
    const stat = await this.storage.stat(this.content.key(prepared.content, prepared.input.file));
    return stat?.size ?? 0;
  }

  /** Storage key of the audio as WAV or Ogg; NotFoundError (HTTP 404) when there is none. */
  async audioKey(user: string, uuid: string, format: 'wav' | 'ogg'): Promise<string> {
    const { row } = await this.store.getForRead(this.store.db, user, uuid, this.definition);
    const { content } = this.store.dataOf<AnnouncementData>(row);
    if (!content) throw new NotFoundError();
    return this.content.audioKey(content, format);
  }

  /**
   * An audio or text2speech conversion finished: ok switches the announcement to the new audio,
   * empty (only silence) and fail leave it without audio; object_modify and announcement_convert
   * go to its readers. A result beyond the owner's storage quota counts as fail. Answers false
   * when the object is no announcement (a recording's audio, or gone). Idempotent.
   */
  async handleConversion(result: ConversionResult): Promise<boolean> {
    const owner = await repo.findAnnouncementOwner(this.store.db, result.objectUuid);
    if (!owner) return false;
    if (result.status === 'ok' && result.content) {
      try {
        await this.applyConversion(owner, result, 'ok');
        return true;
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 'quota-exceeded')) throw error;
        this.deps.log.warn({ announcement: result.objectUuid }, 'converted audio exceeds the storage quota');
        await this.content.deleteContent(result.content);
      }
    }
    await this.applyConversion(owner, result, result.status === 'empty' ? 'empty' : 'fail');
    return true;
  }

  private async applyConversion(
    owner: string,
    result: ConversionResult,
    status: AnnouncementStatus,
  ): Promise<void> {
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
      old = this.store.dataOf<AnnouncementData>(found.row).content;
      const data: AnnouncementData = newContent
        ? { content: newContent, duration: result.metadata.duration ?? 0 }
        : {};
      const row = await this.store.updateObject(
        w,
        found.row,
        { status, data, contentBytes: bytes },
        undefined,
      );
      w.emit(await this.store.readers(w.trx, row), 'announcement_convert', {
        announcement: uuid,
        success: status === 'ok',
        status,
      });
    });
    if (old && old !== newContent) await this.content.deleteContent(old);
  }

  /** Bytes of a content version (WAV and Ogg) for the storage volume. */
  private async contentBytes(content: string): Promise<number> {
    let total = 0;
    for (const file of [FILES.wav, FILES.ogg]) {
      total += (await this.storage.stat(this.content.key(content, file)))?.size ?? 0;
    }
    return total;
  }

  private async removeContent(uuid: string): Promise<void> {
    try {
      await this.content.cancelConversions(uuid);
      await this.content.deleteContent(`${uuid}/`);
    } catch (error) {
      this.deps.log.error({ err: error, announcement: uuid }, 'content of a purged announcement not removed');
    }
  }
}
