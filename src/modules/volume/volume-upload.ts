/**
 * A raw file upload as the volume routes take it (PUT/POST of file content): the body read whole
 * within the upload bound, and the MIME type its Content-Type names.
 */
import type { Readable } from 'node:stream';
import { ApiError } from '../../platform/errors.js';

/** The MIME type of content that names none (or names one that is no type/subtype). */
export const DEFAULT_MIME = 'application/octet-stream';

/** Reads a raw upload whole, at most `limit` bytes (too-large beyond); an empty body is an empty file. */
export async function readBody(body: unknown, limit: number, declaredLength?: string): Promise<Buffer> {
  if (declaredLength !== undefined && Number(declaredLength) > limit)
    throw new ApiError('too-large', `larger than ${limit} bytes`);
  if (Buffer.isBuffer(body)) {
    if (body.length > limit) throw new ApiError('too-large', `larger than ${limit} bytes`);
    return body;
  }
  const stream = body as Readable | undefined;
  if (!stream || typeof stream.on !== 'function') return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  // Past the limit the rest is read and dropped, so that the connection can still answer.
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buffer.length;
    if (size <= limit) chunks.push(buffer);
  }
  if (size > limit) throw new ApiError('too-large', `larger than ${limit} bytes`);
  return Buffer.concat(chunks);
}

/** The type/subtype of a Content-Type header, lower-cased; the default when absent or odd. */
export function mimeOf(header: string | undefined): string {
  const type = (header ?? '').split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/.test(type)
    ? type
    : DEFAULT_MIME;
}
