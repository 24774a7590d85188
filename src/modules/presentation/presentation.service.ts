/**
 * Presentations (spec "Presentation", Resources "Presentation"): an object type of the store
 * whose content is a PDF, converted in the background into one PNG per slide while the
 * original is kept (decisions.md "Content and conversion"). Access, tags, trash and object
 * events come from the object store; what all types with content share, from ContentObjects;
 * the live part (control, subscriptions) is PresentationLiveService.
 */
import { ContentObjects, type ContentObjectsDeps } from '../../platform/content/content-object.js';
import {
  type ContentService,
  type ContentStorage,
  type ConversionResult,
  FILES,
} from '../../platform/content/index.js';
import type { ObjectStore } from '../../platform/object-store/index.js';
import type { CreateObjectBody, UpdateObjectBody } from '../../platform/schema.js';
import type { PresentationObject } from './presentation.schema.js';
import { PRESENTATION, type PresentationData } from './presentation.type.js';
import type { PresentationLiveService } from './presentation-live.service.js';

export interface PresentationServiceDeps extends ContentObjectsDeps {
  readonly live: PresentationLiveService;
}

type Status = PresentationObject['status'];

export class PresentationService {
  private readonly store: ObjectStore;
  private readonly content: ContentService;
  private readonly live: PresentationLiveService;
  private readonly objects: ContentObjects<PresentationData>;

  constructor(deps: PresentationServiceDeps) {
    this.store = deps.store;
    this.content = deps.content;
    this.live = deps.live;
    this.objects = new ContentObjects<PresentationData>(deps, {
      ...PRESENTATION,
      conversions: ['presentation'],
      // The spec lists no quota-exceeded for this upload: one beyond the free volume is too-large.
      uploadQuotaStatus: 'too-large',
      files: (metadata) => {
        const slides = Array.from({ length: metadata.page_count ?? 0 }, (_, index) => FILES.slide(index + 1));
        return [FILES.sourcePdf, ...slides];
      },
      converted: (_current, content, metadata) =>
        content ? { page_count: metadata.page_count ?? 0, content } : {},
      // A started presentation whose page is beyond the new slides goes to page 1.
      onNewContent: (w, uuid, data) => this.live.contentChanged(w, uuid, data.page_count ?? 0),
      convertEvent: (presentation, status, data) => ({
        presentation,
        status,
        ...(data.content ? { page_count: data.page_count } : {}),
      }),
    });
  }

  /** Where the slides and PDFs are (for streaming downloads). */
  get storage(): ContentStorage {
    return this.objects.storage;
  }

  createPresentation(user: string, body: CreateObjectBody): Promise<string> {
    return this.objects.create(user, body.description, {});
  }

  async getPresentation(user: string, uuid: string): Promise<PresentationObject> {
    const { object, data } = await this.objects.read(user, uuid);
    return {
      ...object,
      ...(data.page_count === undefined ? {} : { page_count: data.page_count }),
      busy: await this.live.isBusy(this.store.db, uuid),
      status: object.status as Status,
    };
  }

  updatePresentation(user: string, uuid: string, body: UpdateObjectBody): Promise<void> {
    return this.objects.update(user, uuid, body.description);
  }

  /** Conventions 9. A started presentation stops first; its subscribers hear so. */
  deletePresentation(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.objects.remove(user, uuid, purge, (w) => this.live.endForDeletion(w, uuid));
  }

  /**
   * POST /api/presentation/{uuid}/{xxx}.pdf: the PDF is stored and checked (too-large,
   * malformed-file: the presentation keeps its content), the object shows `convert`, and the
   * slides are made in the background.
   */
  uploadPdf(user: string, uuid: string, body: unknown): Promise<void> {
    return this.objects.upload(user, uuid, 'presentation', body);
  }

  /** Storage key of one slide (1-based); NotFoundError (HTTP 404) when there is none. */
  async slideKey(user: string, uuid: string, page: number): Promise<string> {
    return this.content.existingKey(await this.objects.currentContent(user, uuid), FILES.slide(page));
  }

  /** Storage key of the original PDF. */
  async pdfKey(user: string, uuid: string): Promise<string> {
    return this.content.existingKey(await this.objects.currentContent(user, uuid), FILES.sourcePdf);
  }

  /** A presentation conversion finished (ContentObjects.handleConversion; tests call it directly). */
  handleConversion(result: ConversionResult): Promise<void> {
    return this.objects.receive(result);
  }
}
