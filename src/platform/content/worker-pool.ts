/**
 * The bounded pool of conversion workers (conversion work happens off
 * the main event loop). `size` workers take background conversions in order; short interactive
 * tasks (checking an upload, a page preview, a PDF download) go first and may use one extra
 * worker, so that they do not wait behind a long document.
 *
 * Workers are child processes, not worker_threads. A worker thread shares the server's process
 * and its helper threads (V8's garbage collection and compilers, libuv's pool), which run at
 * normal priority: with conversions in a worker thread, however low its own priority, the HTTP
 * p99 at 1,000 requests/s rose several-fold (docs/benchmarks.md). A child process lowers every
 * thread it has (priority.ts), and a crash in a converter (a WebAssembly abort, memory
 * exhaustion) cannot take the server down. Background priority means a busy node makes
 * conversions wait: their time limit therefore counts the worker's CPU time.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger } from 'fastify';
import { MalformedContentError } from './errors.js';
import { cpuTimeMs } from './priority.js';

export interface PoolTask {
  readonly task: string;
  readonly input?: Uint8Array;
  readonly args?: unknown;
}

export interface RunOptions {
  /** Goes ahead of queued conversions and may use the extra worker. */
  readonly interactive?: boolean;
  /** The task's limit of the worker's CPU time (see WALL_CLOCK_FACTOR). */
  readonly timeoutMs?: number;
  /** Aborting drops the task: a queued one is not started, a running one's worker is stopped. */
  readonly signal?: AbortSignal;
}

/**
 * The worker ended (a crash, memory exhaustion, a signal) while it ran the task: the task's
 * input may be the cause, or something else took the worker down; the caller decides whether
 * to try again.
 */
export class WorkerExitedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerExitedError';
  }
}

/** The task was aborted through its signal. */
export class TaskCancelledError extends Error {
  constructor() {
    super('conversion task cancelled');
    this.name = 'TaskCancelledError';
  }
}

/** Messages from a worker. */
export type WorkerReply =
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
  readonly worker: ChildProcess;
  readonly extra: boolean;
  current: Pending | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * A task's time limit counts the worker's CPU time, so that a worker kept waiting at background
 * priority on a busy node is not taken for a runaway conversion. A task that uses no CPU (a hung
 * storage read) is stopped after this many times its limit in wall-clock time.
 */
export const WALL_CLOCK_FACTOR = 6;

/** libuv threads of a conversion worker (its file I/O). */
export const WORKER_IO_THREADS = '1';

function spawn(workerData: unknown): ChildProcess {
  const source = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const entry = fileURLToPath(new URL(`./content-worker${source}`, import.meta.url));
  // Running from TypeScript sources, the worker loads tsx (resolved from here, not from the cwd).
  const loader = source === '.ts' ? ['--import', import.meta.resolve('tsx')] : [];
  // One CPU per worker: V8 without background threads (garbage collection, compilers) and one
  // libuv thread. Helper threads running beside the worker's own took a second CPU: even in the
  // idle scheduling class one ran up to a 4 ms scheduler tick while the server's thread waited
  // (traced with `perf sched`, docs/benchmarks.md). The pool's size is the conversions' share.
  const execArgv = [...loader, '--single-threaded'];
  // 'advanced' serialization carries Uint8Array inputs and outputs as bytes, not JSON arrays.
  return fork(entry, [JSON.stringify(workerData ?? null)], {
    execArgv,
    serialization: 'advanced',
    env: { ...process.env, UV_THREADPOOL_SIZE: WORKER_IO_THREADS },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Whether the worker keeps the server's event loop alive: a busy one does, an idle one not. */
function hold(worker: ChildProcess, busy: boolean): void {
  if (busy) {
    worker.ref();
    worker.channel?.ref();
  } else {
    worker.unref();
    worker.channel?.unref();
  }
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
    /** Given to every worker at its start (its first argument, as JSON). */
    private readonly workerData: unknown = null,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new Error('worker pool size must be at least 1');
  }

  /** Runs a task in a worker; rejects with MalformedContentError for content that cannot be parsed. */
  run<T>(task: PoolTask, options: RunOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('worker pool closed'));
    if (options.signal?.aborted) return Promise.reject(new TaskCancelledError());
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = {
        id: this.nextId++,
        task,
        options,
        resolve: resolve as (v: unknown) => void,
        reject,
      };
      const queue = options.interactive ? this.interactiveQueue : this.conversionQueue;
      queue.push(pending);
      options.signal?.addEventListener(
        'abort',
        () => {
          const queued = queue.indexOf(pending);
          if (queued >= 0) {
            queue.splice(queued, 1);
            reject(new TaskCancelledError());
            return;
          }
          const slot = this.slots.find((each) => each.current === pending);
          if (slot) void this.retire(slot, new TaskCancelledError());
        },
        { once: true },
      );
      this.pump();
    });
  }

  /** Tasks waiting or running. */
  get load(): number {
    return (
      this.interactiveQueue.length + this.conversionQueue.length + this.slots.filter((s) => s.current).length
    );
  }

  /** Process ids of the running workers (operators and tests look at their priority). */
  get workerPids(): number[] {
    return this.slots.flatMap((slot) => (slot.worker.pid === undefined ? [] : [slot.worker.pid]));
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
    const worker = spawn(this.workerData);
    const slot: Slot = { worker, extra, current: undefined, timer: undefined };
    worker.on('message', (message: WorkerReply) => this.receive(slot, message));
    worker.on('error', (error) => {
      this.log?.error({ err: error }, 'conversion worker failed');
      void this.retire(slot, new WorkerExitedError(`conversion worker failed: ${error.message}`));
    });
    worker.on('exit', (code, signal) => {
      void this.retire(
        slot,
        new WorkerExitedError(`conversion worker exited with ${signal ?? `code ${code}`}`),
      );
    });
    hold(worker, false);
    this.slots.push(slot);
    return slot;
  }

  private start(slot: Slot, pending: Pending): void {
    slot.current = pending;
    hold(slot.worker, true);
    const limit = pending.options.timeoutMs ?? this.defaultTimeoutMs;
    const started = performance.now();
    const startedCpu = cpuTimeMs(slot.worker.pid);
    slot.timer = setInterval(
      () => {
        const wall = performance.now() - started;
        const cpu = cpuTimeMs(slot.worker.pid);
        const used = startedCpu === undefined || cpu === undefined ? wall : cpu - startedCpu;
        if (used >= limit || wall >= limit * WALL_CLOCK_FACTOR) {
          void this.retire(slot, new Error(`conversion task ${pending.task.task} timed out`));
        }
      },
      Math.min(limit, 1000),
    );
    const { task, input, args } = pending.task;
    slot.worker.send({ id: pending.id, task, input, args });
  }

  private receive(slot: Slot, message: WorkerReply): void {
    const pending = slot.current;
    if (!pending || pending.id !== message.id) return;
    this.finish(slot);
    if (message.type === 'done') pending.resolve(message.result);
    else
      pending.reject(
        message.malformed ? new MalformedContentError(message.message) : new Error(message.message),
      );
    this.pump();
  }

  private finish(slot: Slot): void {
    if (slot.timer) clearInterval(slot.timer);
    slot.timer = undefined;
    slot.current = undefined;
    if (slot.worker.connected) hold(slot.worker, false);
  }

  /** Removes a worker (failed, timed out or closing) and rejects its task. */
  private async retire(slot: Slot, reason: Error): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    const pending = slot.current;
    this.finish(slot);
    pending?.reject(reason);
    await stop(slot.worker);
    if (!this.closed) this.pump();
  }
}

/** Ends a worker and waits until it has gone. */
function stop(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    worker.once('exit', () => resolve());
    // Held until it has exited, so that a caller awaiting this is not left behind.
    worker.ref();
    worker.kill('SIGKILL');
  });
}
