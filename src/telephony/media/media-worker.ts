/**
 * The media worker's thread (started by WorkerMediaEngine, worker-engine.ts): one MediaEngine
 * whose RTP sockets, 20 ms clock, G.711 coding, DTMF and recorders live here, so that packets
 * never reach the main event loop (the API and the SIP UA). The main thread sends commands
 * (protocol in worker-engine.ts); this thread answers with results and DTMF events.
 */
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { FaxHandle } from '../fax/fax-link.js';
import type { MediaEndpoint } from './media-endpoint.js';
import { MediaEngine, type MediaEngineOptions } from './media-engine.js';
import type { MediaRoom } from './media-room.js';
import { MixingDelays } from './mixing-delay.js';
import type { Recorder } from './recorder.js';
import { answerPlay, answerRecording, isRoomCommand, leaveRooms, roomCommand } from './room-commands.js';
import type { WorkerCommand, WorkerEvent, WorkerMediaEngineOptions } from './worker-engine.js';

const port = parentPort;
if (!port) throw new Error('media-worker.ts runs as a worker thread');
const engine = new MediaEngine(workerData as MediaEngineOptions);
const endpoints = new Map<number, MediaEndpoint>();
const recorders = new Map<number, Recorder>();
const faxes = new Map<number, FaxHandle>();
const links = new Map<number, () => void>();
const rooms = new Map<number, MediaRoom>();
const delays = new MixingDelays();

/**
 * Events of one turn of this thread's loop go to the main thread as one message, as its commands
 * come here: a postMessage each cost the worker about a twentieth of its time with fifty rooms'
 * floor changes (bench:conference's profile).
 */
let outbox: WorkerEvent[] = [];
let transfers: ArrayBuffer[] = [];
function flush(): void {
  const batch = outbox;
  const transfer = transfers;
  outbox = [];
  transfers = [];
  port!.postMessage(batch, transfer);
}
const post = (event: WorkerEvent, transfer?: ArrayBuffer[]) => {
  if (outbox.length === 0) setImmediate(flush);
  outbox.push(event);
  if (transfer) transfers.push(...transfer);
};

async function create(id: number): Promise<void> {
  try {
    const endpoint = await engine.createEndpoint();
    endpoints.set(id, endpoint);
    endpoint.onDtmf((event) => {
      if (event.source === 'rfc4733')
        post({ ev: 'dtmf', endpoint: id, digit: event.digit, durationMs: event.durationMs });
    });
    post({ ev: 'created', id, port: endpoint.port });
  } catch (error) {
    post({ ev: 'created', id, error: (error as Error).message });
  }
}

function handle(command: WorkerCommand): void {
  if (isRoomCommand(command)) {
    roomCommand({ engine, endpoints, recorders, rooms, delays, post }, command);
    return;
  }
  switch (command.op) {
    case 'create':
      void create(command.id);
      return;
    case 'close-all':
      for (const off of links.values()) off();
      links.clear();
      for (const room of rooms.values()) room.close();
      rooms.clear();
      engine.close();
      endpoints.clear();
      post({ ev: 'closed-all' });
      return;
    case 'connect': {
      const a = endpoints.get(command.a);
      const b = endpoints.get(command.b);
      if (a && b) links.set(command.id, a.connect(b));
      return;
    }
    case 'disconnect':
      links.get(command.id)?.();
      links.delete(command.id);
      return;
    case 'mixing-delays':
      post({ ev: 'mixing-delays', id: command.id, figures: delays.take() });
      return;
  }
  const endpoint = endpoints.get(command.endpoint);
  switch (command.op) {
    case 'remote':
      endpoint?.setRemote(command.remote);
      return;
    case 'play':
      answerPlay(post, command.id, endpoint, command.source);
      return;
    case 'stop':
      endpoint?.stop();
      return;
    case 'mute':
      endpoint?.mute(command.muted);
      return;
    case 'dtmf':
      if (!endpoint) {
        post({ ev: 'result', id: command.id, value: 'done' });
        return;
      }
      void endpoint
        .sendDtmf(command.digits, command.durationMs)
        .then(() => post({ ev: 'result', id: command.id, value: 'done' }));
      return;
    case 'record':
      answerRecording({ recorders, post }, command.id, endpoint?.record(command.maxSeconds));
      return;
    case 'fax': {
      if (!endpoint || endpoint.isClosed) {
        post({ ev: 'faxed', id: command.id });
        return;
      }
      const id = command.id;
      const fax = endpoint.fax(command.options, (pages) => post({ ev: 'fax-page', id, pages }));
      faxes.set(id, fax);
      void fax.done.then((result) => {
        faxes.delete(id);
        post({ ev: 'faxed', id, result });
      });
      return;
    }
    case 'fax-stop':
      faxes.get(command.id)?.stop();
      return;
    case 'record-stop':
      recorders.get(command.id)?.stop(command.reason);
      return;
    case 'close':
      leaveRooms(rooms, command.endpoint);
      endpoints.delete(command.endpoint);
      endpoint?.close();
      return;
  }
}

port.on('message', (batch: WorkerCommand[]) => {
  for (const command of batch) {
    try {
      handle(command);
    } catch {
      // A bad command must not end every call's media.
    }
  }
});
/**
 * The nice value asked for (WorkerMediaEngineOptions.niceness), of this thread alone: on Linux,
 * setpriority of pid 0 is the calling thread's (each thread has its own), so the main thread keeps its.
 */
function applyPriority(niceness: number | undefined): WorkerEvent {
  if (niceness === undefined) return { ev: 'ready' };
  try {
    os.setPriority(niceness);
    return { ev: 'ready', niceness };
  } catch (error) {
    return { ev: 'ready', niceness, priorityError: (error as Error).message };
  }
}
post(applyPriority((workerData as WorkerMediaEngineOptions).niceness));
