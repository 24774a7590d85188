/**
 * Recordings (spec "Recording", Resources "Recording"): mailbox recordings, an object type of
 * the store whose content is audio in telephony form (8 kHz mono, WAV and Ogg Vorbis). Telephony
 * creates them (createRecording); clients read, describe, download and delete them. Access,
 * tags, trash and object events come from the object store.
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
import type {
  AccessedObject,
  ObjectRow,
  ObjectStore,
  ObjectTypeDefinition,
} from '../../platform/object-store/index.js';
import * as repo from './recording.repository.js';
import type { RecordingObject, RecordingStatus, UpdateRecordingBody } from './recording.schema.js';

export interface RecordingServiceDeps {
  readonly store: ObjectStore;
  readonly content: ContentService;
  readonly log: FastifyBaseLogger;
}

/** The type fields kept in the object row. */
interface RecordingData {
  from: string;
  to: string;
  /** Content version (storage prefix) holding the WAV and Ogg files. */
  content?: string;
  /** Seconds of audio. */
  duration?: number;
}

/** A recording as telephony hands it over: who called whom, and the audio (WAV or Ogg). */
export interface NewRecording {
  from: string;
  to: string;
  description?: string;
  audio: { readonly stream: Readable } | { readonly data: Uint8Array };
}

export class RecordingService {
  readonly definition: ObjectTypeDefinition;
  private readonly store: ObjectStore;
  private readonly content: ContentService;

  constructor(private readonly deps: RecordingServiceDeps) {
    this.store = deps.store;
    this.content = deps.content;
    this.definition = this.store.defineType({
      type: 'recording',
      wrong: 'wrong-recording',
      // Runs inside the purging transaction; the content goes once it is over (never awaited
      // here: on SQLite the transaction holds the only connection).
      onPurge: async (_trx, row) => {
        void this.removeContent(row.uuid);
      },
    });
  }

  /** Where the audio files are (for streaming downloads). */
  get storage(): ContentStorage {
    return this.content.storage;
  }

  /**
   * A new mailbox recording of `owner` (telephony): the object appears at once (object_new,
   * in tag_inbox and tag_unread, status record) and its audio is converted in the background
   * (status convert, then ok, empty or fail). Audio that is too large or cannot be read leaves
   * the recording with status fail. Its audio counts toward the owner's storage volume when
   * converted; a result that does not fit ends as fail (the message is not lost silently: the
   * recording with from and to stays).
   */
  async createRecording(owner: string, input: NewRecording): Promise<string> {
    const row = await this.store.write(async (w) => {
      const tags = await this.store.userTags(w.trx, owner);
      return this.store.createObject(w, {
        type: 'recording',
        owner,
        description: input.description ?? '',
        status: 'record',
        data: { from: input.from, to: input.to } satisfies RecordingData,
        tags: [tags.tag_inbox, tags.tag_unread],
        checkQuota: false,
      });
    });
    let prepared: PreparedConversion;
    try {
      prepared = await this.content.prepareConversion('audio', row.uuid, input.audio);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.deps.log.warn({ recording: row.uuid, status: error.status }, 'recording audio refused');
      await this.setStatus(row, 'fail');
      return row.uuid;
    }
    try {
      await this.store.write(async (w) => {
        await this.content.recordConversion(w.trx, prepared);
        const { row: current } = await this.store.getForRead(w.trx, owner, row.uuid, this.definition);
        await this.store.updateObject(w, current, { status: 'convert' }, undefined);
      });
    } catch (error) {
      await this.content.discardConversion(prepared);
      throw error;
    }
    this.content.startConversion(prepared);
    return row.uuid;
  }

  private setStatus(row: ObjectRow, status: RecordingStatus): Promise<void> {
    return this.store.write(async (w) => {
      const { row: current } = await this.store.getForRead(w.trx, row.owner, row.uuid, this.definition);
      await this.store.updateObject(w, current, { status }, undefined);
    });
  }

  async getRecording(user: string, uuid: string): Promise<RecordingObject> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.definition);
    const base = await this.store.describe(db, user, row);
    const data = this.store.dataOf<RecordingData>(row);
    return {
      owner: base.owner,
      time: base.time,
      description: base.description,
      from: data.from,
      to: data.to,
      status: (row.status ?? 'empty') as RecordingStatus,
      tag: base.tag,
    };
  }

  updateRecording(user: string, uuid: string, body: UpdateRecordingBody): Promise<void> {
    return this.store.write(async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      if (row.description === body.description) return;
      await this.store.updateObject(w, row, { description: body.description }, user);
    });
  }

  /** Conventions 9; purge removes the audio too. */
  deleteRecording(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.store.write(async (w) => {
      const found = await this.store.getForRead(w.trx, user, uuid, this.definition);
      await this.store.deleteObject(w, user, found, purge);
    });
  }

  /** Storage key of the audio as WAV or Ogg; NotFoundError (HTTP 404) when there is none. */
  async audioKey(user: string, uuid: string, format: 'wav' | 'ogg'): Promise<string> {
    const { row } = await this.store.getForRead(this.store.db, user, uuid, this.definition);
    const { content } = this.store.dataOf<RecordingData>(row);
    if (!content) throw new NotFoundError();
    return this.content.audioKey(content, format);
  }

  /**
   * An audio conversion finished: ok gives the recording its audio, empty (only silence) and fail
   * leave it without; object_modify goes to its readers. A result beyond the owner's storage
   * quota counts as fail. Answers false when the object is no recording. Idempotent.
   */
  async handleConversion(result: ConversionResult): Promise<boolean> {
    const owner = await repo.findRecordingOwner(this.store.db, result.objectUuid);
    if (!owner) return false;
    if (result.status === 'ok' && result.content) {
      try {
        await this.applyConversion(owner, result, 'ok');
        return true;
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 'quota-exceeded')) throw error;
        this.deps.log.warn({ recording: result.objectUuid }, 'converted audio exceeds the storage quota');
        await this.content.deleteContent(result.content);
      }
    }
    await this.applyConversion(owner, result, result.status === 'empty' ? 'empty' : 'fail');
    return true;
  }

  private async applyConversion(
    owner: string,
    result: ConversionResult,
    status: RecordingStatus,
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
      const current = this.store.dataOf<RecordingData>(found.row);
      old = current.content;
      const data: RecordingData = newContent
        ? { from: current.from, to: current.to, content: newContent, duration: result.metadata.duration ?? 0 }
        : { from: current.from, to: current.to };
      await this.store.updateObject(w, found.row, { status, data, contentBytes: bytes }, undefined);
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
      this.deps.log.error({ err: error, recording: uuid }, 'content of a purged recording not removed');
    }
  }
}
