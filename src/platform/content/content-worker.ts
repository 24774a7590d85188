/**
 * Entry of a conversion worker (a child process of the server): runs one task at a time for the
 * WorkerPool. Conversions read their input from content storage and write their output files
 * there as they are produced, so that the server's event loop only hears the outcome.
 */
import { MalformedContentError } from './errors.js';
import type { FaxPageImage, FaxReportData } from './fax-pdf.js';
import type { FaxOptions } from './layout.js';
import { writeOutput } from './output.js';
import { lowerPriority } from './priority.js';
import type { SpeechLocale } from './speech.js';
import { type ContentStorage, openStorage, type StorageLocation } from './storage.js';
import type { PoolTask, WorkerReply } from './worker-pool.js';

type Handler = (input: Uint8Array, args: never) => Promise<unknown> | unknown;

const EMPTY = new Uint8Array(0);

/** The pool's workerData: where content is stored. */
const workerData = JSON.parse(process.argv[2] ?? 'null') as { storage?: StorageLocation } | null;
let opened: ContentStorage | undefined;

function storage(): ContentStorage {
  if (!workerData?.storage) throw new Error('the conversion worker was given no content storage');
  opened ??= openStorage(workerData.storage);
  return opened;
}

/** The key of a task's stored input. */
interface StoredInput {
  readonly source: string;
}

/** Where a conversion's output files go (the version's prefix), and how many bytes they may take. */
interface StoredOutput {
  readonly output: string;
  readonly maxOutput?: number;
}

const source = (args: StoredInput) => storage().read(args.source);

function int16(input: Uint8Array): Int16Array {
  const copy = input.slice();
  return new Int16Array(copy.buffer, 0, copy.length >> 1);
}

type Converters = typeof import('./converters.js');

function taskHandlers({
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
  speechForCalls,
}: Converters): Record<string, Handler> {
  return {
    'probe-pdf': async (_input, args: StoredInput) => probePdf(await source(args)),
    'probe-audio': async (_input, args: StoredInput) => probeAudio(await source(args)),
    fax: (_input, args: StoredInput & StoredOutput & { options: FaxOptions }) =>
      writeOutput(
        storage(),
        args.output,
        async (emit) => convertFax(await source(args), args.options, emit),
        args.maxOutput,
      ),
    presentation: (_input, args: StoredInput & StoredOutput) =>
      writeOutput(
        storage(),
        args.output,
        async (emit) => convertPresentation(await source(args), emit),
        args.maxOutput,
      ),
    audio: (_input, args: StoredInput & StoredOutput & { maxSeconds?: number }) =>
      writeOutput(
        storage(),
        args.output,
        async (emit) => convertAudio(await source(args), emit, args.maxSeconds),
        args.maxOutput,
      ),
    pcm: (input, args: StoredOutput & { sampleRate: number }) =>
      writeOutput(
        storage(),
        args.output,
        (emit) => convertSpeech({ sampleRate: args.sampleRate, samples: int16(input) }, emit),
        args.maxOutput,
      ),
    speak: async (_input, args: { text: string; locale: SpeechLocale }) => {
      const audio = await speakWithEspeak(args.text, args.locale);
      return { sampleRate: audio.sampleRate, samples: new Uint8Array(audio.samples.buffer) };
    },
    // Resampling a long text's speech takes a while: not on the server's event loop.
    'speech-for-calls': (input, args: { sampleRate: number }) => {
      const pcm = speechForCalls({ sampleRate: args.sampleRate, samples: int16(input) });
      return new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    },
    'fax-page-png': (input, args: Omit<FaxPageImage, 'g4'>) => faxPagePng({ ...args, g4: input }),
    'fax-pdf': (input) => faxPdf(input),
    'fax-report': (input, args: { data: FaxReportData; page?: Omit<FaxPageImage, 'g4'> }) =>
      faxReport(args.data, args.page ? { ...args.page, g4: input } : undefined),
  };
}

// First of all, so that loading the converters (WebAssembly) already runs in the background.
lowerPriority();
// Tasks may arrive while the converters load: they wait for them.
const handlers = import('./converters.js').then(taskHandlers);
// The server has gone (even if killed): so does its worker.
process.on('disconnect', () => process.exit(0));

function send(message: WorkerReply): void {
  process.send!(message);
}

process.on('message', async (message: PoolTask & { id: number }) => {
  const { id } = message;
  try {
    const handler = (await handlers)[message.task];
    if (!handler) throw new Error(`unknown conversion task ${message.task}`);
    const result = await handler(message.input ?? EMPTY, message.args as never);
    send({ id, type: 'done', result });
  } catch (error) {
    const malformed = error instanceof MalformedContentError;
    send({ id, type: 'error', malformed, message: error instanceof Error ? error.message : String(error) });
  }
});
