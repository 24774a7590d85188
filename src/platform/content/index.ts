/**
 * Content storage and conversion for fax, presentation, announcement and recording
 * (decisions.md "Content and conversion"). Object types use ContentService to convert uploads
 * and find the files to download, and sendContent to stream them.
 */
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../database/database.js';
import { ContentService } from './content-service.js';
import type { SpeechEngine } from './speech.js';
import { LocalContentStorage } from './storage.js';

export { ContentService, defaultWorkerCount } from './content-service.js';
export type {
  ContentServiceOptions,
  ContentTypeRegistration,
  ConversionHandler,
  ConversionInput,
  ConversionKind,
  ConversionOptions,
  ConversionResult,
  ConversionStatus,
  PreparedConversion,
} from './content-types.js';
export { CONTENT_TYPES, parseRange, type SendOptions, sendBytes, sendContent } from './download.js';
export type { FaxReportData } from './fax-pdf.js';
export { type FaxIndex, FILES } from './layout.js';
export {
  EspeakSpeechEngine,
  SPEECH_LOCALES,
  type SpeechAudio,
  type SpeechEngine,
  type SpeechLocale,
} from './speech.js';
export {
  type ByteRange,
  ContentNotFoundError,
  type ContentStat,
  type ContentStorage,
  ContentTooLargeError,
  LocalContentStorage,
} from './storage.js';

/** The content service of this node: files under DATA_DIR/content, jobs in the database. */
export function createContentService(
  config: Pick<Config, 'dataDir' | 'publicUrl' | 'maxUploadSize'>,
  db: Db,
  log: FastifyBaseLogger,
  clock: Clock,
  options: { workers?: number; speech?: SpeechEngine } = {},
): ContentService {
  return new ContentService({
    db,
    storage: new LocalContentStorage(path.join(config.dataDir, 'content')),
    node: config.publicUrl,
    log,
    clock,
    maxUploadSize: config.maxUploadSize,
    ...options,
  });
}
