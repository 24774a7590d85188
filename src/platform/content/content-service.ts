/**
 * The content pipeline shared by fax, presentation, announcement and recording (decisions.md
 * "Content and conversion"). An upload is stored as it came under a new content version
 * ("<object>/<job>/"), checked (malformed-file, too-large), and converted in the background by
 * the worker pool; the handler its content type registered then gets ok, empty or fail with the
 * metadata and switches the object to the new version. The platform knows no content type:
 * each registers the converters it uses and its result handler, and results go by the job's type. Jobs are rows in content_job, so conversions that
 * were pending or running when the node stopped run again when it starts. The shapes and limits
 * are content-types.ts, the orphan sweep content-sweep.ts, the built-in voice speech.ts.
 */
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
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
  listJobs,
  listObjectJobs,
  listOwnerJobs,
} from './content-job.repository.js';
import { sweepOrphanContent } from './content-sweep.js';
import {
  type ContentServiceOptions,
  type ContentTypeRegistration,
  type ConversionInput,
  type ConversionKind,
  type ConversionOptions,
  type ConversionResult,
  type ConversionStatus,
  type InputProbe,
  type JobInput,
  keepsSource,
  MAX_ATTEMPTS,
  MAX_AUDIO_SECONDS,
  MAX_PAGES,
  type PreparedConversion,
  SWEEP_INTERVAL_MS,
  type SweepResult,
} from './content-types.js';
import { MalformedContentError } from './errors.js';
import { type FaxOptions, FILES, MAX_PAGE_IMAGE_PIXELS } from './layout.js';
import { EspeakSpeechEngine, type SpeechEngine } from './speech.js';
import { type ContentStorage, ContentTooLargeError } from './storage.js';
import { TaskCancelledError, WorkerExitedError, WorkerPool } from './worker-pool.js';

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

  /**
   * `text` spoken in `locale` as a call plays it: 8 kHz 16-bit samples (the call API's play). A
   * locale the speech engine has not is wrong-syntax, as for text2speech.
   */
  async speakForCalls(text: string, locale: string): Promise<Int16Array> {
    if (!this.speech.locales.includes(locale)) throw new ApiError('wrong-syntax', 'unknown locale');
    const speech = await this.speech.synthesize(text, locale);
    const pcm = new Uint8Array(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength);
    const result = await this.pool.run<Uint8Array>({
      task: 'speech-for-calls',
      input: pcm,
      args: { sampleRate: speech.sampleRate },
    });
    const bytes = result.slice();
    return new Int16Array(bytes.buffer, 0, bytes.length >> 1);
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
    const context = {
      db: this.db,
      storage: this.storage,
      clock: this.options.clock,
      log: this.log,
      types: this.types,
      preparing: this.preparing,
      closing: () => this.closing,
    };
    this.sweeping ??= sweepOrphanContent(context, atStart).finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
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
