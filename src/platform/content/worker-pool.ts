/**
 * The bounded pool of conversion workers (issue "content pipeline": conversion work happens off
 * the main event loop). `size` workers take background conversions in order; short interactive
 * tasks (checking an upload, a page preview, a PDF download) go first and may use one extra
 * worker, so that they do not wait behind a long document.
 */
import { Worker } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import { MalformedContentError } from './errors.js';

export interface PoolTask {
  readonly task: string;
  readonly input?: Uint8Array;
  readonly args?: unknown;
  /** The input's memory may move to the worker (the caller no longer uses it): no copy. */
  readonly transfer?: boolean;
}

export interface RunOptions {
  /** Goes ahead of queued conversions and may use the extra worker. */
  readonly interactive?: boolean;
  /** Receives output file bytes as the worker produces them. */
  readonly onEmit?: (file: string, data: Uint8Array) => void;
  readonly timeoutMs?: number;
}

/** Messages from a worker. */
export type WorkerReply =
  | { readonly id: number; readonly type: 'emit'; readonly file: string; readonly data: Uint8Array }
  | { readonly id: number; readonly type: 'done'; readonly result: unknown }
  | { readonly id: number; readonly type: 'error'; readonly malformed: boolean; readonly message: string };

interface Pending {
  readonly id: number;
  readonly task: PoolTask;
  readonly options: RunOptions;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  readonly worker: Worker;
  readonly extra: boolean;
  current: Pending | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The buffer to move instead of copy through postMessage: only a large array that is all of
 * its buffer (never a slice of Node's shared Buffer pool, whose slices are under 4 KiB).
 */
export function transferList(data: Uint8Array | undefined): ArrayBuffer[] {
  if (!data || data.byteLength < 65_536) return [];
  const { buffer } = data;
  if (!(buffer instanceof ArrayBuffer)) return [];
  return data.byteOffset === 0 && data.byteLength === buffer.byteLength ? [buffer] : [];
}

function spawn(): Worker {
  const source = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const entry = new URL(`./content-worker${source}`, import.meta.url);
  if (source === '.js') return new Worker(entry);
  // Running from TypeScript sources (tsx): the worker registers tsx before loading its entry.
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry.href)}); })`,
    { eval: true },
  );
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly interactiveQueue: Pending[] = [];
  private readonly conversionQueue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    readonly size: number,
    private readonly log?: FastifyBaseLogger,
    private readonly defaultTimeoutMs = 10 * 60_000,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new Error('worker pool size must be at least 1');
  }

  /** Runs a task in a worker; rejects with MalformedContentError for content that cannot be parsed. */
  run<T>(task: PoolTask, options: RunOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('worker pool closed'));
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = {
        id: this.nextId++,
        task,
        options,
        resolve: resolve as (v: unknown) => void,
        reject,
      };
      (options.interactive ? this.interactiveQueue : this.conversionQueue).push(pending);
      this.pump();
    });
  }

  /** Tasks waiting or running. */
  get load(): number {
    return (
      this.interactiveQueue.length + this.conversionQueue.length + this.slots.filter((s) => s.current).length
    );
  }

  /** Stops every worker; running and queued tasks are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const queued = [...this.interactiveQueue.splice(0), ...this.conversionQueue.splice(0)];
    for (const pending of queued) pending.reject(new Error('worker pool closed'));
    await Promise.all([...this.slots].map((slot) => this.retire(slot, new Error('worker pool closed'))));
  }

  private pump(): void {
    while (this.interactiveQueue.length > 0) {
      const slot = this.idleSlot(true);
      if (!slot) break;
      this.start(slot, this.interactiveQueue.shift()!);
    }
    while (this.conversionQueue.length > 0) {
      const slot = this.idleSlot(false);
      if (!slot) break;
      this.start(slot, this.conversionQueue.shift()!);
    }
  }

  private idleSlot(interactive: boolean): Slot | undefined {
    const idle = this.slots.find((slot) => !slot.current && (interactive || !slot.extra));
    if (idle) return idle;
    const regular = this.slots.filter((slot) => !slot.extra).length;
    if (regular < this.size) return this.addSlot(false);
    if (interactive && !this.slots.some((slot) => slot.extra)) return this.addSlot(true);
    return undefined;
  }

  private addSlot(extra: boolean): Slot {
    const worker = spawn();
    const slot: Slot = { worker, extra, current: undefined, timer: undefined };
    worker.on('message', (message: WorkerReply) => this.receive(slot, message));
    worker.on('error', (error) => {
      this.log?.error({ err: error }, 'conversion worker failed');
      void this.retire(slot, new Error(`conversion worker failed: ${error.message}`));
    });
    worker.on('exit', (code) => {
      void this.retire(slot, new Error(`conversion worker exited with code ${code}`));
    });
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  private start(slot: Slot, pending: Pending): void {
    slot.current = pending;
    // A busy worker keeps the process alive; an idle one does not.
    slot.worker.ref();
    const timeout = pending.options.timeoutMs ?? this.defaultTimeoutMs;
    slot.timer = setTimeout(() => {
      void this.retire(slot, new Error(`conversion task ${pending.task.task} timed out`));
    }, timeout);
    const { task, input, args, transfer } = pending.task;
    slot.worker.postMessage({ id: pending.id, task, input, args }, transfer ? transferList(input) : []);
  }

  private receive(slot: Slot, message: WorkerReply): void {
    const pending = slot.current;
    if (!pending || pending.id !== message.id) return;
    if (message.type === 'emit') {
      pending.options.onEmit?.(message.file, message.data);
      return;
    }
    this.finish(slot);
    if (message.type === 'done') pending.resolve(message.result);
    else
      pending.reject(
        message.malformed ? new MalformedContentError(message.message) : new Error(message.message),
      );
    this.pump();
  }

  private finish(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.current = undefined;
    slot.worker.unref();
  }

  /** Removes a worker (failed, timed out or closing) and rejects its task. */
  private async retire(slot: Slot, reason: Error): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    const pending = slot.current;
    this.finish(slot);
    pending?.reject(reason);
    await slot.worker.terminate();
    if (!this.closed) this.pump();
  }
}
