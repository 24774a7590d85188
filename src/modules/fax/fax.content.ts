/**
 * Fax downloads (spec "Fax": page PNG, PDF, TIFF, sender report; decisions.md "Content and
 * conversion"): rendered from the stored 1-bit pages through the platform's content service,
 * which knows no fax. Each returns the storage key of a file to stream, or the report's bytes;
 * NotFoundError when there is none.
 */
import type { ContentService, FaxIndex, FaxReportData } from '../../platform/content/index.js';
import { FILES } from '../../platform/content/index.js';
import { NotFoundError } from '../../platform/errors.js';

interface FaxPage {
  width: number;
  height: number;
  xRes: number;
  yRes: number;
  g4: Uint8Array;
}

export class FaxContent {
  constructor(private readonly content: ContentService) {}

  async index(content: string): Promise<FaxIndex> {
    try {
      return JSON.parse((await this.content.readFile(content, FILES.faxIndex)).toString('utf8')) as FaxIndex;
    } catch {
      throw new NotFoundError();
    }
  }

  /** The multi-page G4 TIFF. */
  tiffKey(content: string): Promise<string> {
    return this.content.existingKey(content, FILES.faxTiff);
  }

  /** One fax page (1-based) as PNG. */
  pageKey(content: string, page: number): Promise<string> {
    return this.content.derivedKey(content, FILES.faxPng(page), async () => {
      const image = await this.page(content, page);
      if (!image) throw new NotFoundError();
      const { g4, ...args } = image;
      return this.content.render({ task: 'fax-page-png', input: g4, args });
    });
  }

  /** The fax as PDF (CCITT G4 images of the stored pages). */
  pdfKey(content: string): Promise<string> {
    return this.content.derivedKey(content, FILES.faxPdf, async () =>
      this.content.render({ task: 'fax-pdf', input: await this.content.readFile(content, FILES.faxTiff) }),
    );
  }

  /** The fax report PDF, rendered from its data, with the first page of `content` when given. */
  async reportPdf(data: FaxReportData, content?: string): Promise<Uint8Array> {
    const image = content ? await this.page(content, 1).catch(() => undefined) : undefined;
    const page = image && { width: image.width, height: image.height, xRes: image.xRes, yRes: image.yRes };
    return this.content.render({ task: 'fax-report', input: image?.g4, args: { data, page } });
  }

  private async page(content: string, page: number): Promise<FaxPage | undefined> {
    const index = await this.index(content);
    const location = Number.isInteger(page) ? index.pages[page - 1] : undefined;
    if (!location) return undefined;
    const g4 = await this.content.readFile(content, FILES.faxTiff, {
      start: location.offset,
      end: location.offset + location.length - 1,
    });
    return { width: location.width, height: location.height, xRes: index.x_res, yRes: index.y_res, g4 };
  }
}
