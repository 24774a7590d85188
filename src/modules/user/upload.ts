/** Reading a raw upload (profile picture, id card) into memory, bounded by the upload limit. */
import type { Readable } from 'node:stream';
import { ApiError } from '../../platform/errors.js';

/** The whole body; too-large beyond `limit` bytes, malformed-file when there is none. */
export async function readUpload(body: unknown, limit: number, declaredLength?: string): Promise<Buffer> {
  // A client that announces too much is refused before anything is read.
  if (declaredLength !== undefined && Number(declaredLength) > limit)
    throw new ApiError('too-large', `larger than ${limit} bytes`);
  if (Buffer.isBuffer(body)) {
    if (body.length > limit) throw new ApiError('too-large', `larger than ${limit} bytes`);
    return body;
  }
  const stream = body as Readable | undefined;
  if (!stream || typeof stream.on !== 'function') throw new ApiError('malformed-file', 'no content');
  const chunks: Buffer[] = [];
  let size = 0;
  // Past the limit the rest is read and dropped, so that the connection can still answer.
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buffer.length;
    if (size <= limit) chunks.push(buffer);
  }
  if (size > limit) throw new ApiError('too-large', `larger than ${limit} bytes`);
  if (size === 0) throw new ApiError('malformed-file', 'no content');
  return Buffer.concat(chunks);
}
