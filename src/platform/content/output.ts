/**
 * Conversion output to content storage (downloads and conversions never
 * hold whole files in memory). Used by the conversion workers: each emitted file streams to
 * storage in batches as it grows, with back-pressure on the converter.
 */
import { PassThrough } from 'node:stream';
import type { Emit } from './converters.js';
import { type ContentStorage, ContentTooLargeError } from './storage.js';

/**
 * Output is written in batches of this size: few large writes disturb the server less than a
 * write per page (measured: the HTTP p99 under conversion load rose with per-page writes), and
 * a long document still never sits whole in memory.
 */
export const WRITE_BATCH = 4 * 1024 * 1024;

interface OutputFile {
  readonly stream: PassThrough;
  readonly done: Promise<unknown>;
  pending: Uint8Array[];
  size: number;
}

/**
 * Hands the file's pending bytes to storage; resolves when it can take more, rejects with the
 * storage's error once storing failed, so that the converter stops at its next write rather
 * than convert the rest of a long document for nothing.
 */
function flush(entry: OutputFile): Promise<void> | undefined {
  const { stream, done } = entry;
  const data = entry.pending.length === 1 ? entry.pending[0]! : Buffer.concat(entry.pending);
  entry.pending = [];
  entry.size = 0;
  if (stream.destroyed) return done.then(() => {});
  if (stream.write(data)) return undefined;
  return new Promise<void>((resolve, reject) => {
    const settle = (error?: unknown) => {
      stream.off('drain', settle);
      stream.off('close', settle);
      if (error === undefined) resolve();
      else reject(error);
    };
    stream.on('drain', settle);
    stream.on('close', settle);
    done.then(() => settle(), settle);
  });
}

/**
 * Runs a conversion whose emitted files go to storage under `output`, streamed in batches as
 * they grow. A failed conversion or failed storing rejects with its error; files already stored
 * stay for the caller, who deletes the whole version. More than `maxBytes` of output in all
 * (a small input may expand enormously) rejects with ContentTooLargeError at the write that
 * passes it.
 */
export async function writeOutput<T>(
  storage: ContentStorage,
  output: string,
  convert: (emit: Emit) => Promise<T>,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<T> {
  const files = new Map<string, OutputFile>();
  let total = 0;
  const emit: Emit = (file, data) => {
    total += data.length;
    if (total > maxBytes) throw new ContentTooLargeError(maxBytes);
    let entry = files.get(file);
    if (!entry) {
      const stream = new PassThrough();
      const done = storage.put(`${output}${file}`, stream);
      // Failures are collected below; this keeps an early one from going unhandled.
      done.catch(() => {});
      entry = { stream, done, pending: [], size: 0 };
      files.set(file, entry);
    }
    entry.pending.push(data);
    entry.size += data.length;
    return entry.size >= WRITE_BATCH ? flush(entry) : undefined;
  };
  try {
    const result = await convert(emit);
    for (const entry of files.values()) {
      if (entry.size > 0) await flush(entry);
      entry.stream.end();
    }
    await Promise.all([...files.values()].map((entry) => entry.done));
    return result;
  } catch (error) {
    for (const entry of files.values()) entry.stream.destroy(error as Error);
    await Promise.allSettled([...files.values()].map((entry) => entry.done));
    throw error;
  }
}
