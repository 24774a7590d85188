/**
 * Entry of a conversion worker (worker_threads): runs one task at a time for the WorkerPool and
 * streams output files back as they are produced.
 */
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import {
  convertAudio,
  convertFax,
  convertPresentation,
  convertSpeech,
  faxPagePng,
  faxPdf,
  faxReport,
  probeAudio,
  probePdf,
  speakWithEspeak,
} from './converters.js';
import { MalformedContentError } from './errors.js';
import type { FaxPageImage, FaxReportData } from './fax-pdf.js';
import type { FaxOptions } from './layout.js';
import type { SpeechLocale } from './speech.js';
import { type PoolTask, transferList, type WorkerReply } from './worker-pool.js';

type Emit = (file: string, data: Uint8Array) => void;
type Handler = (input: Uint8Array, args: never, emit: Emit) => Promise<unknown> | unknown;

const EMPTY = new Uint8Array(0);

// Conversions are background work: on Linux, where niceness is per thread, this worker yields
// the CPU to the HTTP event loop (elsewhere it would lower the whole process, so it is left).
// The lowest priority (19) measured better HTTP p99 under conversion load than 10.
if (process.platform === 'linux') {
  try {
    os.setPriority(19);
  } catch {
    // Not permitted: run at normal priority.
  }
}

function int16(input: Uint8Array): Int16Array {
  const copy = input.slice();
  return new Int16Array(copy.buffer, 0, copy.length >> 1);
}

const handlers: Record<string, Handler> = {
  'probe-pdf': (input) => probePdf(input),
  'probe-audio': (input) => probeAudio(input),
  fax: (input, args: FaxOptions, emit) => convertFax(input, args, emit),
  presentation: (input, _args, emit) => convertPresentation(input, emit),
  audio: (input, _args, emit) => convertAudio(input, emit),
  pcm: (input, args: { sampleRate: number }, emit) =>
    convertSpeech({ sampleRate: args.sampleRate, samples: int16(input) }, emit),
  speak: async (_input, args: { text: string; locale: SpeechLocale }) => {
    const audio = await speakWithEspeak(args.text, args.locale);
    return { sampleRate: audio.sampleRate, samples: new Uint8Array(audio.samples.buffer) };
  },
  'fax-page-png': (input, args: Omit<FaxPageImage, 'g4'>) => faxPagePng({ ...args, g4: input }),
  'fax-pdf': (input) => faxPdf(input),
  'fax-report': (input, args: { data: FaxReportData; page?: Omit<FaxPageImage, 'g4'> }) =>
    faxReport(args.data, args.page ? { ...args.page, g4: input } : undefined),
};

function send(message: WorkerReply, transfer: ArrayBuffer[] = []): void {
  parentPort!.postMessage(message, transfer);
}

parentPort!.on('message', async (message: PoolTask & { id: number }) => {
  const { id } = message;
  try {
    const handler = handlers[message.task];
    if (!handler) throw new Error(`unknown conversion task ${message.task}`);
    const emit: Emit = (file, data) => send({ id, type: 'emit', file, data });
    const result = await handler(message.input ?? EMPTY, message.args as never, emit);
    const bytes =
      result instanceof Uint8Array ? result : (result as { samples?: Uint8Array } | undefined)?.samples;
    send({ id, type: 'done', result }, transferList(bytes));
  } catch (error) {
    const malformed = error instanceof MalformedContentError;
    send({ id, type: 'error', malformed, message: error instanceof Error ? error.message : String(error) });
  }
});
