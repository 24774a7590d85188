/**
 * The content pipeline shared by fax, presentation, announcement and recording (decisions.md
 * "Content and conversion"). An upload is stored as it came under a new content version
 * ("<object>/<job>/"), checked (malformed-file, too-large), and converted in the background by
 * the worker pool; the handler its content type registered then gets ok, empty or fail with the
 * metadata and switches the object to the new version. The platform knows no content type:
 * each registers the converters it uses and its result handler, and results go by the job's type. Jobs are rows in content_job, so conversions that
 * were pending or running when the node stopped run again when it starts.
 */
import os from 'node:os';
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../database/database.js';
import { ApiError, NotFoundError } from '../errors.js';
import { newUuid, nowSeconds, uuidSortKey } from '../ids.js';
import {
  type ContentJobTable,
  countAttempt,
  deleteJob,
  deleteOlderJobs,
  findJob,
  hasNewerJob,
  insertJob,
  listAllJobs,
  listJobs,
  listObjectJobs,
  listOwnerJobs,
} from './content-job.repository.js';
import { MalformedContentError } from './errors.js';
import { type FaxOptions, FILES, MAX_PAGE_IMAGE_PIXELS } from './layout.js';
import { SPEECH_LOCALES, type SpeechAudio, type SpeechEngine } from './speech.js';
import { type ContentStorage, ContentTooLargeError } from './storage.js';
import { TaskCancelledError, WorkerExitedError, WorkerPool } from './worker-pool.js';

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

type JobInput = { readonly file: string } | { readonly text: string; readonly locale: string };

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
 * A `.partial` file (content being written) older than this is left from a crash; younger ones
 * may be in flight and stay until the next sweep (at start every one goes: nothing is in flight).
 */
const PARTIAL_AGE_SECONDS = 60 * 60;

/**
 * A job whose worker died on it this often fails. Only the worker's death counts (it may be the
 * input's fault): a node that stopped or crashed while the job ran is not the job's fault, and
 * its jobs simply run again at the next start.
 */
export const MAX_ATTEMPTS = 3;

/** Only presentations keep their original; fax and audio keep the converted form. */
function keepsSource(kind: ConversionKind): boolean {
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

/** The built-in voice: eSpeak NG (WebAssembly) in the conversion workers. */
export class EspeakSpeechEngine implements SpeechEngine {
  readonly locales = SPEECH_LOCALES;
  constructor(private readonly pool: WorkerPool) {}

  async synthesize(text: string, locale: string): Promise<SpeechAudio> {
    const result = await this.pool.run<{ sampleRate: number; samples: Uint8Array }>({
      task: 'speak',
      args: { text, locale },
    });
    const bytes = result.samples.slice();
    return { sampleRate: result.sampleRate, samples: new Int16Array(bytes.buffer, 0, bytes.length >> 1) };
  }
}

export function defaultWorkerCount(): number {
  return Math.max(1, os.availableParallelism() - 1);
}

function parseJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

export class ContentService {
  readonly pool: WorkerPool;
  private readonly db: Db;
  readonly storage: ContentStorage;
  private readonly log: FastifyBaseLogger;
  private readonly speech: SpeechEngine;
  private readonly types = new Map<string, ContentTypeRegistration>();
  private readonly queue: ContentJobTable[] = [];
  private readonly scheduled = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  /** Jobs being converted now, and their objects. */
  private readonly active = new Set<string>();
  private readonly activeJobs = new Map<string, ContentJobTable>();
  private readonly activeObjects = new Set<string>();
  private readonly rendering = new Map<string, Promise<string>>();
  private readonly idleWaiters: (() => void)[] = [];
  /** Aborts the running conversion of a job (superseded by a newer upload, or cancelled). */
  private readonly aborts = new Map<string, AbortController>();
  /** Jobs whose worker died on them: they run again (MAX_ATTEMPTS). */
  private readonly retrying = new Set<string>();
  /** Content versions stored by prepareConversion whose job is not recorded yet. */
  private readonly preparing = new Set<string>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<SweepResult> | undefined;
  private started = false;
  private closing = false;

  constructor(private readonly options: ContentServiceOptions) {
    this.db = options.db;
    this.storage = options.storage;
    this.log = options.log;
    this.pool = new WorkerPool(options.workers ?? defaultWorkerCount(), options.log, options.timeoutMs, {
      storage: options.storage.location,
    });
    this.speech = options.speech ?? new EspeakSpeechEngine(this.pool);
  }

  /** Registers a content type (an object type with content); before start(). */
  registerType(type: string, registration: ContentTypeRegistration): void {
    if (this.types.has(type)) throw new Error(`content type ${type} registered twice`);
    this.types.set(type, registration);
  }

  /**
   * Sweeps what a crash left (sweepOrphans), resumes this node's pending jobs and runs new ones
   * from now on; sweeps again every sweepIntervalMs.
   */
  async start(): Promise<void> {
    await this.sweepOrphans(true);
    this.started = true;
    for (const job of await listJobs(this.db, this.options.node)) this.schedule(job);
    this.pump();
    const interval = this.options.sweepIntervalMs ?? SWEEP_INTERVAL_MS;
    if (interval > 0) {
      this.sweepTimer = setInterval(() => {
        this.sweepOrphans(false).catch((error: unknown) =>
          this.log.error({ err: error }, 'content orphan sweep failed'),
        );
      }, interval);
      this.sweepTimer.unref();
    }
  }

  /** Stops the workers; unfinished jobs stay recorded and resume at the next start. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.queue.length = 0;
    await this.pool.close();
    await Promise.allSettled([...this.running, ...(this.sweeping ? [this.sweeping] : [])]);
  }

  /**
   * Removes what no job and no object needs (orphans after a crash): content versions
   * without a job row that their object does not point to (an upload in flight at a crash, an
   * old version not yet deleted after a switch, content of a purged object), `.partial` files
   * (all at start; later those older than an hour) and the upload of a converted version that
   * does not keep it. Versions of a type that cannot tell its object's content are left whole.
   * What stays is counted in the owner's volume (the object's content bytes).
   */
  sweepOrphans(atStart = false): Promise<SweepResult> {
    this.sweeping ??= this.sweep(atStart).finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  private async sweep(atStart: boolean): Promise<SweepResult> {
    const result: SweepResult = { versions: 0, files: 0, bytes: 0 };
    const now = nowSeconds(this.options.clock);
    const jobs = new Set((await listAllJobs(this.db)).map((job) => job.content));
    for (const version of await this.storage.listVersions()) {
      if (jobs.has(version.prefix) || this.preparing.has(version.prefix) || this.closing) continue;
      const size = version.files.reduce((sum, file) => sum + file.size, 0);
      const current = await this.currentContentOf(version.object);
      // Written since the job list was read: the next sweep decides.
      if (!atStart && version.files.some((file) => file.modified >= now - 60)) continue;
      if (current === undefined) continue;
      if (current.content !== version.prefix) {
        // Another look at the job table: a job recorded since the list was read keeps it.
        if ((await listObjectJobs(this.db, version.object)).some((job) => job.content === version.prefix))
          continue;
        await this.storage.deletePrefix(version.prefix);
        result.versions += 1;
        result.bytes += size;
        continue;
      }
      for (const file of version.files) {
        const partial =
          file.name.endsWith('.partial') && (atStart || file.modified < now - PARTIAL_AGE_SECONDS);
        const source =
          !current.keepsSource && (file.name === FILES.sourcePdf || file.name === FILES.sourceAudio);
        if (!partial && !source) continue;
        await this.storage.delete(`${version.prefix}${file.name}`);
        result.files += 1;
        result.bytes += file.size;
      }
    }
    if (result.versions > 0 || result.files > 0) this.log.info({ ...result }, 'content orphans removed');
    return result;
  }

  /**
   * The object's current content according to the type it belongs to: undefined when no
   * registered type can tell (the version is then kept); content null when it has none or the
   * object is gone.
   */
  private async currentContentOf(
    object: string,
  ): Promise<{ content: string | null; keepsSource: boolean } | undefined> {
    const types = [...this.types.values()];
    if (types.length === 0 || types.some((registration) => !registration.currentContent)) return undefined;
    for (const registration of types) {
      const content = await registration.currentContent!(object);
      if (content !== undefined)
        return { content, keepsSource: registration.conversions.some((kind) => keepsSource(kind)) };
    }
    return { content: null, keepsSource: false };
  }

  /** Resolves when no job is queued or running (tests and benchmarks). */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stores and checks an input without recording a job yet: throws ApiError too-large or
   * malformed-file, leaving nothing behind. Follow with recordConversion (in the caller's
   * transaction) and startConversion after commit, or discardConversion.
   */
  async prepareConversion(
    type: string,
    kind: ConversionKind,
    objectUuid: string,
    input: ConversionInput,
    options: ConversionOptions = {},
  ): Promise<PreparedConversion> {
    if (!this.types.get(type)?.conversions.includes(kind))
      throw new Error(`${type} does not convert ${kind}`);
    const job = newUuid();
    const content = `${objectUuid}/${job}/`;
    if ('text' in input) {
      if (kind !== 'text2speech') throw new Error(`${kind} converts uploads, not text`);
      if (!this.speech.locales.includes(input.locale)) throw new ApiError('wrong-syntax', 'unknown locale');
      return {
        job,
        type,
        kind,
        objectUuid,
        content,
        input: { text: input.text, locale: input.locale },
        options: {},
        size: 0,
        probe: {},
      };
    }
    if (kind === 'text2speech') throw new Error('text2speech converts text');
    const file = kind === 'audio' ? FILES.sourceAudio : FILES.sourcePdf;
    const key = `${content}${file}`;
    let size: number;
    let probe: InputProbe;
    this.preparing.add(content);
    try {
      const source = 'stream' in input ? input.stream : input.data;
      ({ size } = await this.storage.put(key, source, { maxSize: this.options.maxUploadSize }));
      if (size === 0) throw new MalformedContentError('empty upload');
      // The worker reads the stored upload itself: the bytes never pass the event loop again.
      const task = kind === 'audio' ? 'probe-audio' : 'probe-pdf';
      probe = await this.pool.run<InputProbe>({ task, args: { source: key } }, { interactive: true });
      // A small file may hold much work (3,000 pages in 412 KB; hours of Ogg).
      if ((probe.page_count ?? 0) > (this.options.maxPages ?? MAX_PAGES))
        throw new ContentTooLargeError(this.options.maxPages ?? MAX_PAGES);
      if ((probe.image_pixels ?? 0) > MAX_PAGE_IMAGE_PIXELS)
        throw new ContentTooLargeError(MAX_PAGE_IMAGE_PIXELS);
      if ((probe.duration ?? 0) > (this.options.maxAudioSeconds ?? MAX_AUDIO_SECONDS))
        throw new ContentTooLargeError(this.options.maxAudioSeconds ?? MAX_AUDIO_SECONDS);
    } catch (error) {
      this.preparing.delete(content);
      await this.storage.deletePrefix(content);
      if (error instanceof ContentTooLargeError) throw new ApiError('too-large', 'upload too large');
      if (error instanceof MalformedContentError) throw new ApiError('malformed-file', error.message);
      throw error;
    }
    const fax: FaxOptions = {
      orientation: options.orientation ?? 'portrait',
      mode: options.mode ?? 'normal',
    };
    return {
      job,
      type,
      kind,
      objectUuid,
      content,
      input: { file },
      options: kind === 'fax' ? fax : {},
      size,
      probe,
    };
  }

  /** The job's row: recorded in the database and scheduled in memory alike. */
  private jobRow(prepared: PreparedConversion): ContentJobTable {
    return {
      uuid: prepared.job,
      node: this.options.node,
      type: prepared.type,
      kind: prepared.kind,
      object_uuid: prepared.objectUuid,
      content: prepared.content,
      input: JSON.stringify(prepared.input),
      options: JSON.stringify(prepared.options),
      sort_key: uuidSortKey(prepared.job),
      attempts: 0,
      created: nowSeconds(this.options.clock),
    };
  }

  /**
   * Records the job (pass the caller's transaction to make it part of its write); the object's
   * older jobs are dropped with it: the newer upload supersedes them (startConversion stops a
   * running one and removes their files).
   */
  async recordConversion(db: Db, prepared: PreparedConversion): Promise<void> {
    const row = this.jobRow(prepared);
    await deleteOlderJobs(db, prepared.objectUuid, row.sort_key);
    await insertJob(db, row);
  }

  /** Starts a recorded job (after the recording transaction committed). */
  startConversion(prepared: PreparedConversion): void {
    this.preparing.delete(prepared.content);
    const row = this.jobRow(prepared);
    // Older jobs of the object: a queued one is dropped, a running one stopped (each
    // re-upload queued a full conversion); their rows went with the newer job's recording.
    for (let index = this.queue.length - 1; index >= 0; index--) {
      const queued = this.queue[index]!;
      if (queued.object_uuid !== row.object_uuid || queued.sort_key >= row.sort_key) continue;
      this.queue.splice(index, 1);
      this.scheduled.delete(queued.uuid);
      void this.storage
        .deletePrefix(queued.content)
        .catch((error: unknown) =>
          this.log.error({ err: error, job: queued.uuid }, 'superseded job not removed'),
        );
    }
    for (const [uuid, controller] of this.aborts) {
      if (uuid !== row.uuid && this.activeJobs.get(uuid)?.object_uuid === row.object_uuid) controller.abort();
    }
    this.schedule(row);
    this.pump();
  }

  /**
   * The owner's unfinished conversions with the bytes their uploads take (each upload is stored
   * until its conversion ends): they count against the owner's volume and job limit.
   */
  async pendingUploads(db: Db, owner: string): Promise<{ objectUuid: string; size: number }[]> {
    const pending: { objectUuid: string; size: number }[] = [];
    for (const job of await listOwnerJobs(db, owner)) {
      const input = parseJson<JobInput>(job.input);
      const size =
        'file' in input ? ((await this.storage.stat(this.key(job.content, input.file)))?.size ?? 0) : 0;
      pending.push({ objectUuid: job.object_uuid, size });
    }
    return pending;
  }

  /** Removes a prepared input whose job was not recorded. */
  async discardConversion(prepared: PreparedConversion): Promise<void> {
    this.preparing.delete(prepared.content);
    await this.storage.deletePrefix(prepared.content);
  }

  /** prepare + record + start, for callers that need no transaction of their own. */
  async enqueueConversion(
    type: string,
    kind: ConversionKind,
    objectUuid: string,
    input: ConversionInput,
    options: ConversionOptions = {},
  ): Promise<PreparedConversion> {
    const prepared = await this.prepareConversion(type, kind, objectUuid, input, options);
    try {
      await this.recordConversion(this.db, prepared);
    } catch (error) {
      await this.discardConversion(prepared);
      throw error;
    }
    this.startConversion(prepared);
    return prepared;
  }

  /** Drops an object's unfinished jobs (when the object is purged); a running one is discarded when done. */
  async cancelConversions(objectUuid: string): Promise<void> {
    for (const job of await listObjectJobs(this.db, objectUuid)) {
      await deleteJob(this.db, job.uuid);
      const queued = this.queue.findIndex((entry) => entry.uuid === job.uuid);
      if (queued >= 0) {
        this.queue.splice(queued, 1);
        this.scheduled.delete(job.uuid);
      }
      // A running job is stopped; it finds its row gone and removes its files.
      if (this.active.has(job.uuid)) this.aborts.get(job.uuid)?.abort();
      else await this.storage.deletePrefix(job.content);
    }
  }

  /** Deletes a content version (the old one after a switch, or all of a purged object's). */
  async deleteContent(content: string): Promise<void> {
    await this.storage.deletePrefix(content);
  }

  /** Bytes a conversion may write (its output files together). */
  private get maxOutput(): number {
    return this.options.maxOutputSize ?? 10 * this.options.maxUploadSize;
  }

  private schedule(job: ContentJobTable): void {
    if (this.scheduled.has(job.uuid) || this.closing) return;
    this.scheduled.add(job.uuid);
    this.queue.push(job);
  }

  private pump(): void {
    if (!this.started || this.closing) return;
    while (this.running.size < this.pool.size) {
      // One job per object at a time, oldest first: a newer upload can then only finish after
      // an older one, and supersedes it.
      const next = this.queue.findIndex((entry) => !this.activeObjects.has(entry.object_uuid));
      if (next < 0) break;
      const [job] = this.queue.splice(next, 1) as [ContentJobTable];
      this.active.add(job.uuid);
      this.activeJobs.set(job.uuid, job);
      this.activeObjects.add(job.object_uuid);
      const run = this.execute(job)
        .catch((error: unknown) => this.log.error({ err: error, job: job.uuid }, 'content job failed'))
        .finally(() => {
          this.running.delete(run);
          this.active.delete(job.uuid);
          this.activeJobs.delete(job.uuid);
          this.aborts.delete(job.uuid);
          this.activeObjects.delete(job.object_uuid);
          this.scheduled.delete(job.uuid);
          if (this.retrying.delete(job.uuid)) this.schedule(job);
          this.pump();
          if (this.queue.length === 0 && this.running.size === 0) {
            for (const resolve of this.idleWaiters.splice(0)) resolve();
          }
        });
      this.running.add(run);
    }
  }

  private async execute(job: ContentJobTable): Promise<void> {
    const kind = job.kind as ConversionKind;
    // Dropped (superseded, cancelled) before it started: nothing to convert.
    if (!(await findJob(this.db, job.uuid)) || (await hasNewerJob(this.db, job.object_uuid, job.sort_key))) {
      await this.storage.deletePrefix(job.content);
      await deleteJob(this.db, job.uuid);
      return;
    }
    let status: ConversionStatus;
    let metadata: Record<string, number> = {};
    let message: string | undefined;
    const abort = new AbortController();
    this.aborts.set(job.uuid, abort);
    try {
      ({ status, metadata } = await this.convert(kind, job, abort.signal));
    } catch (error) {
      // Closing: the job stays recorded and runs again at the next start.
      if (this.closing) return;
      status = 'fail';
      message = error instanceof Error ? error.message : String(error);
      if (error instanceof WorkerExitedError) {
        // Only the worker's death counts against the job (a node crash does not).
        const attempts = job.attempts + 1;
        await countAttempt(this.db, job.uuid, attempts);
        if (attempts < MAX_ATTEMPTS && !abort.signal.aborted) {
          this.log.warn(
            { job: job.uuid, kind, err: error, attempts },
            'conversion worker died; trying again',
          );
          job.attempts = attempts;
          this.retrying.add(job.uuid);
          return;
        }
        message = `the conversion worker died on this input ${attempts} times (${message})`;
      }
      if (!(error instanceof TaskCancelledError))
        this.log.warn({ job: job.uuid, kind, err: error }, 'conversion failed');
    }
    if (this.closing) return;
    const current = await findJob(this.db, job.uuid);
    const superseded = current ? await hasNewerJob(this.db, job.object_uuid, job.sort_key) : true;
    if (status !== 'ok' || superseded) await this.storage.deletePrefix(job.content);
    if (!current) return;
    if (!superseded) {
      const handler = this.types.get(job.type)?.handle;
      const result: ConversionResult = {
        job: job.uuid,
        type: job.type,
        kind,
        objectUuid: job.object_uuid,
        status,
        content: status === 'ok' ? job.content : undefined,
        metadata,
        ...(message === undefined ? {} : { message }),
      };
      if (!handler) {
        // A job of an unknown type (one recorded before its object was purged): nothing takes it.
        this.log.warn({ job: job.uuid, type: job.type }, 'no handler for conversion results');
        if (status === 'ok') await this.storage.deletePrefix(job.content);
      } else {
        try {
          await handler(result);
        } catch (error) {
          this.log.error({ err: error, job: job.uuid, kind }, 'conversion handler failed');
          if (status === 'ok') await this.storage.deletePrefix(job.content);
        }
      }
    }
    await deleteJob(this.db, job.uuid);
    // The upload goes last: a crash before here leaves the job to run again from its source (the
    // handler is idempotent), and one after the row went leaves only a file the sweep removes.
    // Deleting it first made the rerun fail an object that had converted.
    const input = parseJson<JobInput>(job.input);
    if (status === 'ok' && !superseded && !keepsSource(kind) && 'file' in input)
      await this.storage.delete(`${job.content}${input.file}`);
  }

  private async convert(
    kind: ConversionKind,
    job: ContentJobTable,
    signal: AbortSignal,
  ): Promise<{ status: 'ok' | 'empty'; metadata: Record<string, number> }> {
    const input = parseJson<JobInput>(job.input);
    // The worker writes the output files under the version's prefix itself.
    const output = job.content;
    if ('text' in input) {
      const speech = await this.speech.synthesize(input.text, input.locale);
      const pcm = new Uint8Array(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength);
      return this.pool.run(
        {
          task: 'pcm',
          input: pcm,
          args: { sampleRate: speech.sampleRate, output, maxOutput: this.maxOutput },
        },
        { signal },
      );
    }
    const task = kind === 'fax' ? 'fax' : kind === 'presentation' ? 'presentation' : 'audio';
    const source = `${job.content}${input.file}`;
    return this.pool.run(
      {
        task,
        args: {
          source,
          output,
          maxOutput: this.maxOutput,
          maxSeconds: this.options.maxAudioSeconds ?? MAX_AUDIO_SECONDS,
          options: parseJson<ConversionOptions>(job.options),
        },
      },
      { signal },
    );
  }

  // Downloads. Content types read their files, derive previews and render through these;
  // NotFoundError when there is none.

  key(content: string, file: string): string {
    return `${content}${file}`;
  }

  /** A file (FILES) a conversion wrote into the content version. */
  async existingKey(content: string, file: string): Promise<string> {
    return this.existing(this.key(content, file));
  }

  /** Reads a file of a content version, or a byte range of it; NotFoundError when absent. */
  async readFile(content: string, file: string, range?: { start: number; end: number }): Promise<Buffer> {
    try {
      return await this.storage.read(this.key(content, file), range);
    } catch {
      throw new NotFoundError();
    }
  }

  /**
   * The key of a file derived from a content version (a preview, a PDF), made by `make` on first
   * use and kept; however many ask at a time, it is made once.
   */
  derivedKey(content: string, file: string, make: () => Promise<Uint8Array>): Promise<string> {
    return this.produce(this.key(content, file), make);
  }

  /** Runs a rendering task for a download at once, ahead of queued conversions. */
  render(task: { task: string; input?: Uint8Array | undefined; args?: unknown }): Promise<Uint8Array> {
    return this.pool.run<Uint8Array>(task, { interactive: true });
  }

  private async existing(key: string): Promise<string> {
    if (!(await this.storage.stat(key))) throw new NotFoundError();
    return key;
  }

  /** Returns the key, making the file first if it is missing (once, however many ask at a time). */
  private async produce(key: string, make: () => Promise<Uint8Array>): Promise<string> {
    if (await this.storage.stat(key)) return key;
    let pending = this.rendering.get(key);
    if (!pending) {
      pending = (async () => {
        const bytes = await make();
        await this.storage.put(key, bytes);
        return key;
      })().finally(() => this.rendering.delete(key));
      this.rendering.set(key, pending);
    }
    return pending;
  }
}
