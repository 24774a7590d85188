/**
 * Announcements (spec "Announcement", Resources "Announcement"): an object type of the store
 * whose content is audio in telephony form (decisions.md "Content and conversion": 8 kHz mono,
 * downloadable as WAV and Ogg Vorbis), made in the background from an uploaded WAV or Ogg file
 * or by text2speech. Access, tags, trash and object events come from the object store; what
 * all types with content share, from ContentObjects.
 */
import { ContentObjects, type ContentObjectsDeps } from '../../platform/content/content-object.js';
import {
  type ContentService,
  type ContentStorage,
  type ConversionResult,
  FILES,
} from '../../platform/content/index.js';
import type { Db } from '../../platform/database/database.js';
import type { ObjectStore } from '../../platform/object-store/index.js';
import type { CreateObjectBody, UpdateObjectBody } from '../../platform/schema.js';
import type { AnnouncementObject, Text2SpeechBody } from './announcement.schema.js';

export type AnnouncementServiceDeps = ContentObjectsDeps;

/** The type fields kept in the object row. */
interface AnnouncementData {
  /** Content version (storage prefix) holding the WAV and Ogg files. */
  content?: string;
  /** Seconds of audio. */
  duration?: number;
}

export class AnnouncementService {
  private readonly content: ContentService;
  private readonly objects: ContentObjects<AnnouncementData>;
  private readonly store: ObjectStore;

  constructor(deps: AnnouncementServiceDeps) {
    this.content = deps.content;
    this.store = deps.store;
    this.objects = new ContentObjects<AnnouncementData>(deps, {
      type: 'announcement',
      wrong: 'wrong-announcement',
      conversions: ['audio', 'text2speech'],
      files: () => [FILES.wav, FILES.ogg],
      converted: (_current, content, metadata) =>
        content ? { content, duration: metadata.duration ?? 0 } : {},
      convertEvent: (announcement, status) => ({ announcement, success: status === 'ok', status }),
    });
  }

  /** Where the audio files are (for streaming downloads). */
  get storage(): ContentStorage {
    return this.objects.storage;
  }

  createAnnouncement(user: string, body: CreateObjectBody): Promise<string> {
    return this.objects.create(user, body.description, {});
  }

  async getAnnouncement(user: string, uuid: string): Promise<AnnouncementObject> {
    return (await this.objects.read(user, uuid)).object;
  }

  /**
   * wrong-announcement unless the user may read every one of `uuids` (telephony configuration
   * refers to announcements: dialplans, IVRs, numbers). `db` is the caller's transaction.
   */
  async requireReadable(db: Db, user: string, uuids: Iterable<string>): Promise<void> {
    for (const uuid of new Set(uuids)) await this.store.getForRead(db, user, uuid, this.objects.definition);
  }

  updateAnnouncement(user: string, uuid: string, body: UpdateObjectBody): Promise<void> {
    return this.objects.update(user, uuid, body.description);
  }

  /** Conventions 9; purge removes the audio too. */
  deleteAnnouncement(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.objects.remove(user, uuid, purge);
  }

  /**
   * POST /api/announcement/{uuid}/{xxx}.wav or .ogg: the file (WAV or Ogg Vorbis, whatever the
   * name says) is converted into the announcement's audio (see ContentObjects.convert).
   */
  uploadAudio(user: string, uuid: string, body: unknown): Promise<void> {
    return this.objects.upload(user, uuid, 'audio', body);
  }

  /** POST /api/announcement/{uuid}/text2speech: the text is spoken in the background. */
  text2speech(user: string, uuid: string, body: Text2SpeechBody): Promise<void> {
    return this.objects.convert(user, uuid, 'text2speech', () => ({
      text: body.text,
      locale: body.locale ?? 'de-DE',
    }));
  }

  /** Storage key of the audio as WAV or Ogg; NotFoundError (HTTP 404) when there is none. */
  async audioKey(user: string, uuid: string, format: 'wav' | 'ogg'): Promise<string> {
    return this.content.existingKey(
      await this.objects.currentContent(user, uuid),
      format === 'wav' ? FILES.wav : FILES.ogg,
    );
  }

  /**
   * Storage key the audio would have as WAV, after the user's access check but without asking
   * the storage whether the file is there (the call engine keeps announcements by key, and a key
   * names one content version, which never changes: reading an absent file fails instead).
   */
  async wavKey(user: string, uuid: string): Promise<string> {
    return this.content.key(await this.objects.currentContent(user, uuid), FILES.wav);
  }

  /** A conversion finished (ContentObjects.handleConversion; tests call it directly). */
  handleConversion(result: ConversionResult): Promise<boolean> {
    return this.objects.handleConversion(result);
  }
}
