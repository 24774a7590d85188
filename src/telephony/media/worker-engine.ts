/**
 * Media endpoints in a worker thread (performance: the RTP of 200 calls at 50
 * packets/s each took a fifth of the main thread, whose event loop also serves the API and the
 * SIP UA). WorkerMediaEngine starts media-worker.ts, which runs a MediaEngine; each
 * WorkerEndpoint here is a handle that sends commands (play, stop, record, DTMF, connect, close)
 * and receives results and DTMF events. RTP packets never touch the main thread.
 *
 * When the worker dies, every pending play or recording ends as `closed` and the next
 * endpoint starts a new worker: calls in progress lose their media, new calls work.
 */
import { Worker } from 'node:worker_threads';
import type { FaxHandle } from '../fax/fax-link.js';
import { droppedFax, type FaxResult, type FaxSessionOptions } from '../fax/fax-session.js';
import type {
  DtmfEvent,
  Endpoint,
  EndpointSource,
  Muted,
  PlayResult,
  RecordingHandle,
  RemoteMedia,
} from './media-endpoint.js';
import type { MediaEngineOptions } from './media-engine.js';
import type { MixingFigures } from './mixing-delay.js';
import type { Recording } from './recorder.js';
import type { RoomCommand, RoomEvent } from './room-protocol.js';
import {
  type AudioSource,
  PcmSource,
  type SourceSpec,
  sourceSpec,
  type ToneOptions,
  ToneSource,
} from './sources.js';

/** Main thread -> worker (in batches). Endpoints and requests are named by ids the main thread picks. */
export type WorkerCommand =
  | { readonly op: 'create'; readonly id: number }
  | { readonly op: 'close-all' }
  | { readonly op: 'connect'; readonly id: number; readonly a: number; readonly b: number }
  | { readonly op: 'disconnect'; readonly id: number }
  | { readonly op: 'remote'; readonly endpoint: number; readonly remote: RemoteMedia }
  | { readonly op: 'play'; readonly endpoint: number; readonly id: number; readonly source: SourceSpec }
  | { readonly op: 'stop'; readonly endpoint: number }
  | { readonly op: 'mute'; readonly endpoint: number; readonly muted: Muted }
  | {
      readonly op: 'dtmf';
      readonly endpoint: number;
      readonly id: number;
      readonly digits: string;
      readonly durationMs?: number;
    }
  | { readonly op: 'record'; readonly endpoint: number; readonly id: number; readonly maxSeconds: number }
  | {
      readonly op: 'record-stop';
      readonly endpoint: number;
      readonly id: number;
      readonly reason?: Recording['reason'];
    }
  | {
      readonly op: 'fax';
      readonly endpoint: number;
      readonly id: number;
      readonly options: FaxSessionOptions;
    }
  | { readonly op: 'fax-stop'; readonly endpoint: number; readonly id: number }
  | { readonly op: 'close'; readonly endpoint: number }
  | { readonly op: 'mixing-delays'; readonly id: number }
  | RoomCommand;

/** Worker -> main thread (in batches: an array of them per message). */
export type WorkerEvent =
  | { readonly ev: 'ready'; readonly niceness?: number; readonly priorityError?: string }
  | { readonly ev: 'closed-all' }
  | { readonly ev: 'created'; readonly id: number; readonly port?: number; readonly error?: string }
  | { readonly ev: 'result'; readonly id: number; readonly value: PlayResult | 'done' }
  | { readonly ev: 'recorded'; readonly id: number; readonly recording?: Recording }
  | { readonly ev: 'faxed'; readonly id: number; readonly result?: FaxResult }
  | { readonly ev: 'fax-page'; readonly id: number; readonly pages: number }
  | { readonly ev: 'mixing-delays'; readonly id: number; readonly figures: MixingFigures }
  | {
      readonly ev: 'dtmf';
      readonly endpoint: number;
      readonly digit: string;
      readonly durationMs: number;
    }
  | RoomEvent;

export const EMPTY_RECORDING: Recording = {
  samples: new Int16Array(0),
  durationMs: 0,
  empty: true,
  reason: 'closed',
};

/**
 * The worker's entry. Running from the TypeScript sources (npm start, tests), a worker thread
 * does not inherit tsx's loader on Node 20, so a two-line bootstrap registers it first.
 */
function newWorker(workerData: unknown): Worker {
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./media-worker.js', import.meta.url), { workerData, name: 'media-worker' });
  const entry = new URL('./media-worker.ts', import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData, name: 'media-worker' });
}

export interface WorkerMediaEngineOptions extends MediaEngineOptions {
  /**
   * The media worker thread's nice value (−20..19; lower runs first), as rtpengine's --priority
   * sets its media threads': a room's mix and a call's frames must leave on time while the API,
   * conversions and other processes share the cores. Raising it needs root or CAP_SYS_NICE;
   * without, the thread keeps the process's and `priority` says why. Undefined: unchanged.
   */
  niceness?: number;
}

/** What became of the worker thread's priority: the nice value asked for, and the error if refused. */
export interface WorkerPriority {
  readonly niceness: number;
  readonly error?: string;
}

interface Pending {
  resolve(event: WorkerEvent | undefined): void;
}

export class WorkerMediaEngine implements EndpointSource<WorkerEndpoint> {
  readonly address: string;
  private readonly options: Required<MediaEngineOptions> & { niceness: number | undefined };
  /** Set once the worker has started and tried the nice value asked for (undefined: none asked). */
  priority: WorkerPriority | undefined;
  private worker: Worker | undefined;
  private nextId = 1;
  /** Requests waiting for the worker's answer; settled with undefined if the worker dies. */
  private readonly pending = new Map<number, Pending>();
  private readonly endpoints = new Map<number, WorkerEndpoint>();
  private outbox: WorkerCommand[] = [];
  /** @internal the progress listeners of running faxes, by request id. */
  readonly faxPages = new Map<number, (pages: number) => void>();
  /** @internal the live conference rooms (worker-room.ts), by id. */
  readonly rooms = new Map<number, { receive(event: RoomEvent): void }>();
  private closed = false;

  constructor(
    options: WorkerMediaEngineOptions = {},
    private readonly onPriority?: (priority: WorkerPriority) => void,
  ) {
    this.options = {
      address: options.address ?? '127.0.0.1',
      portMin: options.portMin ?? 31000,
      portMax: options.portMax ?? 31999,
      niceness: options.niceness,
    };
    const { portMin, portMax } = this.options;
    if (portMin < 1024 || portMax > 65534 || portMax <= portMin) {
      throw new Error(`bad RTP port range ${portMin}..${portMax}`);
    }
    this.address = this.options.address;
    this.start();
  }

  get endpointCount(): number {
    return this.endpoints.size;
  }

  private start(): Worker {
    const worker = newWorker(this.options);
    // A worker with nothing pending does not keep the process alive (request/receive ref it).
    worker.unref();
    worker.on('message', (events: WorkerEvent[]) => {
      for (const event of events) this.receive(event);
    });
    worker.on('error', () => {});
    worker.on('exit', () => {
      if (this.worker === worker) this.lost();
    });
    this.worker = worker;
    return worker;
  }

  /** The worker ended: every endpoint is closed, every pending request settles. */
  private lost(): void {
    this.worker = undefined;
    this.outbox = [];
    for (const endpoint of [...this.endpoints.values()]) endpoint.markClosed();
    this.endpoints.clear();
    for (const [room, handle] of [...this.rooms]) handle.receive({ ev: 'room-closed', room });
    this.rooms.clear();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const request of pending) request.resolve(undefined);
  }

  private receive(event: WorkerEvent): void {
    if (event.ev === 'dtmf') {
      this.endpoints
        .get(event.endpoint)
        ?.emitDtmf({ digit: event.digit, durationMs: event.durationMs, source: 'rfc4733' });
      return;
    }
    if (event.ev === 'room-talk' || event.ev === 'room-floor') {
      this.rooms.get(event.room)?.receive(event);
      return;
    }
    if (event.ev === 'ready') {
      if (event.niceness === undefined) return;
      this.priority = {
        niceness: event.niceness,
        ...(event.priorityError ? { error: event.priorityError } : {}),
      };
      this.onPriority?.(this.priority);
      return;
    }
    if (event.ev === 'fax-page') {
      this.faxPages.get(event.id)?.(event.pages);
      return;
    }
    if (!('id' in event)) return;
    const request = this.pending.get(event.id);
    if (!request) return;
    this.pending.delete(event.id);
    if (this.pending.size === 0) this.worker?.unref();
    request.resolve(event);
  }

  /**
   * @internal Commands of one turn of the event loop go as one message: a postMessage wakes the
   * worker (a system call), and a call's setup sends several commands at once.
   */
  send(command: WorkerCommand): void {
    if (!this.worker) return;
    this.outbox.push(command);
    if (this.outbox.length === 1) queueMicrotask(() => this.flush());
  }

  private flush(): void {
    const batch = this.outbox;
    this.outbox = [];
    if (batch.length > 0) this.worker?.postMessage(batch);
  }

  /** @internal a command answered by one event with its id. */
  request(make: (id: number) => WorkerCommand, id = this.newId()): Promise<WorkerEvent | undefined> {
    if (!this.worker) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      if (this.pending.size === 0) this.worker?.ref();
      this.pending.set(id, { resolve });
      this.send(make(id));
    });
  }

  /**
   * The conference mixer's own delay since the last call (mixing-delay.ts): counts per
   * DELAY_BUCKET_MS of every member's frame in every room, how many waited behind another, and
   * how late the rooms' ticks ran; empty when the worker is gone.
   */
  async mixingDelays(): Promise<MixingFigures> {
    const event = await this.request((id) => ({ op: 'mixing-delays', id }));
    return event?.ev === 'mixing-delays' ? event.figures : { delays: [], behind: 0, lateness: [], mixMs: 0 };
  }

  /** @internal a recording in the worker (of an endpoint, or of a room with `endpoint` 0). */
  recording(endpoint: number, make: (id: number) => WorkerCommand): RecordingHandle {
    const id = this.newId();
    const done = this.request(make, id).then(
      (event) => (event?.ev === 'recorded' && event.recording) || EMPTY_RECORDING,
    );
    return {
      done,
      stop: (reason?: Recording['reason']) => this.send({ op: 'record-stop', endpoint, id, reason }),
    };
  }

  /** @internal */
  newId(): number {
    return this.nextId++;
  }

  /** @internal */
  forget(id: number): void {
    this.endpoints.delete(id);
  }

  /** A new endpoint in the worker on the next free even port; throws when the range is exhausted. */
  async createEndpoint(): Promise<WorkerEndpoint> {
    if (this.closed) throw new Error('media engine closed');
    if (!this.worker) this.start();
    const created = await this.request((id) => ({ op: 'create', id }));
    if (created?.ev !== 'created' || created.port === undefined) {
      throw new Error(created?.ev === 'created' ? (created.error ?? 'no endpoint') : 'media worker ended');
    }
    const endpoint = new WorkerEndpoint(this, created.id, this.address, created.port);
    this.endpoints.set(created.id, endpoint);
    return endpoint;
  }

  /** Closes every endpoint and ends the worker. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    for (const endpoint of [...this.endpoints.values()]) endpoint.close();
    if (!worker) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1000);
      worker.on('message', (events: WorkerEvent[]) => {
        if (!events.some((event) => event.ev === 'closed-all')) return;
        clearTimeout(timer);
        resolve();
      });
      this.flush();
      worker.postMessage([{ op: 'close-all' }] satisfies WorkerCommand[]);
    });
    this.worker = undefined;
    this.lost();
    await worker.terminate();
  }
}

/** An endpoint in the media worker, driven from the main thread. */
export class WorkerEndpoint implements Endpoint {
  private closed = false;
  private readonly handlers: ((event: DtmfEvent) => void)[] = [];

  /** @internal created by WorkerMediaEngine.createEndpoint. */
  constructor(
    private readonly engine: WorkerMediaEngine,
    readonly id: number,
    readonly address: string,
    readonly port: number,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  setRemote(remote: RemoteMedia): void {
    if (!this.closed) this.engine.send({ op: 'remote', endpoint: this.id, remote });
  }

  /** Plays a tone, PCM or mix source (as a description: the worker builds its own copy). */
  async play(source: AudioSource): Promise<PlayResult> {
    const spec = sourceSpec(source);
    if (!spec) throw new Error('this source cannot play in the media worker (use connect)');
    if (this.closed) return 'closed';
    const event = await this.engine.request((id) => ({
      op: 'play',
      endpoint: this.id,
      id,
      source: spec,
    }));
    if (!event) return 'closed';
    return event.ev === 'result' ? (event.value as PlayResult) : 'done';
  }

  /** Runs the fax in the worker, beside the endpoint's RTP; a worker that died ends it as dropped. */
  fax(options: FaxSessionOptions, onPage?: (pages: number) => void): FaxHandle {
    const id = this.engine.newId();
    if (onPage) this.engine.faxPages.set(id, onPage);
    const done = this.engine
      .request(() => ({ op: 'fax', endpoint: this.id, id, options }), id)
      .then((event): FaxResult => {
        this.engine.faxPages.delete(id);
        if (event?.ev === 'faxed' && event.result) return event.result;
        return droppedFax('media lost');
      });
    return { done, stop: () => this.engine.send({ op: 'fax-stop', endpoint: this.id, id }) };
  }

  /** 8 kHz mono samples; a SharedArrayBuffer behind them is shared with the worker, not copied. */
  playPcm(samples: Int16Array, loop = false): Promise<PlayResult> {
    return this.play(new PcmSource(samples, loop));
  }

  tone(frequency: number, options?: ToneOptions): Promise<PlayResult> {
    return this.play(new ToneSource(frequency, options));
  }

  stop(): void {
    if (!this.closed) this.engine.send({ op: 'stop', endpoint: this.id });
  }

  mute(muted: Muted): void {
    if (!this.closed) this.engine.send({ op: 'mute', endpoint: this.id, muted });
  }

  async sendDtmf(digits: string, durationMs?: number): Promise<void> {
    if (this.closed) return;
    await this.engine.request((id) => ({ op: 'dtmf', endpoint: this.id, id, digits, durationMs }));
  }

  record(maxSeconds: number): RecordingHandle {
    if (this.closed) return { done: Promise.resolve(EMPTY_RECORDING), stop: () => EMPTY_RECORDING };
    return this.engine.recording(this.id, (id) => ({ op: 'record', endpoint: this.id, id, maxSeconds }));
  }

  onDtmf(handler: (event: DtmfEvent) => void): void {
    this.handlers.push(handler);
  }

  emitDtmf(event: DtmfEvent): void {
    for (const handler of this.handlers) handler(event);
  }

  connect(other: Endpoint): () => void {
    if (!(other instanceof WorkerEndpoint) || other.engine !== this.engine)
      throw new Error('endpoints of different media engines');
    const id = this.engine.newId();
    this.engine.send({ op: 'connect', id, a: this.id, b: other.id });
    return () => this.engine.send({ op: 'disconnect', id });
  }

  /** @internal the worker ended. */
  markClosed(): void {
    this.closed = true;
    this.handlers.length = 0;
  }

  close(): void {
    if (this.closed) return;
    this.markClosed();
    this.engine.forget(this.id);
    this.engine.send({ op: 'close', endpoint: this.id });
  }
}
