/**
 * The content pipeline's shapes and limits (decisions.md "Content and conversion"): what a
 * conversion takes and gives back, what a content type registers, the options of the service,
 * and the bounds of uploads, jobs and the orphan sweep. content-service.ts runs the jobs.
 */
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../database/database.js';
import type { SpeechEngine } from './speech.js';
import type { ContentStorage } from './storage.js';

export type ConversionKind = 'fax' | 'presentation' | 'audio' | 'text2speech';
export type ConversionStatus = 'ok' | 'empty' | 'fail';

/** What to convert: uploaded bytes (a stream or in memory), or text to speak. */
export type ConversionInput =
  | { readonly stream: Readable }
  | { readonly data: Uint8Array }
  | { readonly text: string; readonly locale: string };

export interface ConversionOptions {
  /** Fax: landscape rotates each page by 90 degrees. */
  readonly orientation?: 'portrait' | 'landscape';
  /** Fax: photo dithers grey instead of converting to black and white. */
  readonly mode?: 'normal' | 'photo';
}

/** A stored and checked input whose job is not yet recorded (see prepareConversion). */
export interface PreparedConversion {
  readonly job: string;
  /** The content type (registerType) whose handler takes the result. */
  readonly type: string;
  readonly kind: ConversionKind;
  readonly objectUuid: string;
  /** The content version (storage prefix) the conversion writes. */
  readonly content: string;
  readonly input: JobInput;
  readonly options: ConversionOptions;
  /** Bytes of the stored upload (0 for text). */
  readonly size: number;
  /** What the check found: pages of a PDF, seconds of audio. */
  readonly probe: InputProbe;
}

export interface InputProbe {
  readonly page_count?: number;
  /** The most image pixels one page draws (pdf-render.ts MAX_PAGE_IMAGE_PIXELS). */
  readonly image_pixels?: number;
  readonly duration?: number;
}

export type JobInput = { readonly file: string } | { readonly text: string; readonly locale: string };

export interface ConversionResult {
  readonly job: string;
  readonly type: string;
  readonly kind: ConversionKind;
  readonly objectUuid: string;
  readonly status: ConversionStatus;
  /** The new content version when status is ok; the object should point to it from now on. */
  readonly content: string | undefined;
  /** fax: page_count, x_res, y_res; presentation: page_count; audio and text2speech: duration (s). */
  readonly metadata: Readonly<Record<string, number>>;
  /** Why it failed, for the log. */
  readonly message?: string;
}

/** Called once per finished job (again after a restart if it did not return); should be idempotent. */
export type ConversionHandler = (result: ConversionResult) => Promise<void>;

/** What a content type registers: the converters its jobs run, and the handler of their results. */
export interface ContentTypeRegistration {
  readonly conversions: readonly ConversionKind[];
  readonly handle: ConversionHandler;
  /**
   * The object's current content version; null when it has none, undefined when there is no
   * such object of this type. The orphan sweep keeps what an object points to.
   */
  readonly currentContent?: (objectUuid: string) => Promise<string | null | undefined>;
}

export interface ContentServiceOptions {
  readonly db: Db;
  readonly storage: ContentStorage;
  /** This node's identity (PUBLIC_URL): its jobs' inputs are on its own disk. */
  readonly node: string;
  readonly log: FastifyBaseLogger;
  /** The wall clock of the jobs' stamps. */
  readonly clock: Clock;
  /** Uploads beyond this many bytes are too-large. */
  readonly maxUploadSize: number;
  /** Conversion workers; default: one less than the cores, at least one. */
  readonly workers?: number;
  /** Default: eSpeak NG in the workers. */
  readonly speech?: SpeechEngine;
  /** CPU time a single conversion may use (worker-pool.ts: WALL_CLOCK_FACTOR). */
  readonly timeoutMs?: number;
  /** PDFs of more pages are too-large (default MAX_PAGES). */
  readonly maxPages?: number;
  /** Audio longer than this many seconds is too-large (default MAX_AUDIO_SECONDS). */
  readonly maxAudioSeconds?: number;
  /** A conversion whose output files come to more bytes fails (default: 10 times maxUploadSize). */
  readonly maxOutputSize?: number;
  /** How often the orphan sweep runs besides at start (default SWEEP_INTERVAL_MS; 0: only at start). */
  readonly sweepIntervalMs?: number;
}

/** Default bound of pages of an uploaded PDF (fax or presentation). */
export const MAX_PAGES = 500;
/** Default bound of the duration of uploaded audio: an hour. */
export const MAX_AUDIO_SECONDS = 3600;
/** Objects of one owner converting at a time (exceeded-limit beyond). */
export const MAX_JOBS_PER_USER = 10;
/** The orphan sweep runs at start and then hourly. */
export const SWEEP_INTERVAL_MS = 60 * 60_000;

/**
 * A job whose worker died on it this often fails. Only the worker's death counts (it may be the
 * input's fault): a node that stopped or crashed while the job ran is not the job's fault, and
 * its jobs simply run again at the next start.
 */
export const MAX_ATTEMPTS = 3;

/** Only presentations keep their original; fax and audio keep the converted form. */
export function keepsSource(kind: ConversionKind): boolean {
  return kind === 'presentation';
}

/** What the orphan sweep removed. */
export interface SweepResult {
  /** Content versions no job and no object needs (uploads cut off by a crash, replaced content). */
  versions: number;
  /** Files removed from versions that stay (`.partial` files, sources no longer needed). */
  files: number;
  bytes: number;
}
