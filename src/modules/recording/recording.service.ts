/**
 * Recordings (spec "Recording", Resources "Recording"): mailbox recordings, an object type of
 * the store whose content is audio in telephony form (8 kHz mono, WAV and Ogg Vorbis). Telephony
 * creates them (createRecording); clients read, describe, download and delete them. Access,
 * tags, trash and object events come from the object store; what all types with content share,
 * from ContentObjects.
 */

import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { ContentObjects, type ContentObjectsDeps } from '../../platform/content/content-object.js';
import {
  type ContentService,
  type ContentStorage,
  FILES,
  type PreparedConversion,
} from '../../platform/content/index.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { ObjectRow, ObjectStore } from '../../platform/object-store/index.js';
import type { ContentStatus, UpdateObjectBody } from '../../platform/schema.js';
import type { RecordingObject } from './recording.schema.js';

export type RecordingServiceDeps = ContentObjectsDeps;

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
  private readonly store: ObjectStore;
  private readonly content: ContentService;
  private readonly log: FastifyBaseLogger;
  private readonly objects: ContentObjects<RecordingData>;

  constructor(deps: RecordingServiceDeps) {
    this.store = deps.store;
    this.content = deps.content;
    this.log = deps.log;
    this.objects = new ContentObjects<RecordingData>(deps, {
      type: 'recording',
      wrong: 'wrong-recording',
      conversions: ['audio'],
      files: () => [FILES.wav, FILES.ogg],
      converted: ({ from, to }, content, metadata) =>
        content ? { from, to, content, duration: metadata.duration ?? 0 } : { from, to },
    });
  }

  /** Where the audio files are (for streaming downloads). */
  get storage(): ContentStorage {
    return this.objects.storage;
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
      prepared = await this.content.prepareConversion('recording', 'audio', row.uuid, input.audio);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.log.warn({ recording: row.uuid, status: error.status }, 'recording audio refused');
      await this.store.write((w) => this.setStatus(w, row, 'fail'));
      return row.uuid;
    }
    await this.objects.record(prepared, (w) => this.setStatus(w, row, 'convert'));
    return row.uuid;
  }

  /** A status the platform sets (no user asked). */
  private async setStatus(w: UnitOfWork, row: ObjectRow, status: ContentStatus): Promise<void> {
    const { row: current } = await this.store.getForRead(w.trx, row.owner, row.uuid, this.objects.definition);
    await this.store.updateObject(w, current, { status }, undefined);
  }

  async getRecording(user: string, uuid: string): Promise<RecordingObject> {
    const { object, data } = await this.objects.read(user, uuid);
    return { ...object, from: data.from, to: data.to };
  }

  updateRecording(user: string, uuid: string, body: UpdateObjectBody): Promise<void> {
    return this.objects.update(user, uuid, body.description);
  }

  /** Conventions 9; purge removes the audio too. */
  deleteRecording(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.objects.remove(user, uuid, purge);
  }

  /** Storage key of the audio as WAV or Ogg; NotFoundError (HTTP 404) when there is none. */
  async audioKey(user: string, uuid: string, format: 'wav' | 'ogg'): Promise<string> {
    return this.content.existingKey(
      await this.objects.currentContent(user, uuid),
      format === 'wav' ? FILES.wav : FILES.ogg,
    );
  }
}
