/**
 * Binary downloads of stored content (spec Conventions 3 and 10): streamed from storage, never
 * whole in memory; `inline` selects Content-Disposition inline instead of attachment; a single
 * HTTP Range ("bytes=a-b", "bytes=a-", "bytes=-n") is answered with 206 (audio players seek
 * this way). Missing content throws NotFoundError, which binary routes answer with HTTP 404 and
 * an empty body.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../errors.js';
import { type ByteRange, ContentNotFoundError, type ContentStorage } from './storage.js';

export const CONTENT_TYPES = {
  pdf: 'application/pdf',
  png: 'image/png',
  tif: 'image/tiff',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
} as const;

/**
 * The byte range a Range header asks for within `size` bytes: undefined for the whole content
 * (no header, or a form this server does not serve, such as several ranges), 'unsatisfiable'
 * when it lies outside the content.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return undefined;
  const [, first, last] = match;
  if (first === '' && last === '') return undefined;
  let start: number;
  let end: number;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(first);
    end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
    if (last !== '' && Number(last) < start) return undefined;
  }
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

export interface SendOptions {
  readonly type: string;
  /** Query parameter `inline` was present. */
  readonly inline: boolean;
  /** Serve Range requests (audio). */
  readonly ranges?: boolean;
}

/** Streams stored content as the response. */
export async function sendContent(
  request: FastifyRequest,
  reply: FastifyReply,
  storage: ContentStorage,
  key: string,
  options: SendOptions,
): Promise<FastifyReply> {
  const stat = await storage.stat(key);
  if (!stat) throw new NotFoundError();
  reply
    .header('content-type', options.type)
    .header('content-disposition', options.inline ? 'inline' : 'attachment')
    .header('accept-ranges', options.ranges ? 'bytes' : 'none');
  const range = options.ranges ? parseRange(request.headers.range, stat.size) : undefined;
  if (range === 'unsatisfiable') {
    return reply.code(416).header('content-range', `bytes */${stat.size}`).send();
  }
  let stream: Awaited<ReturnType<ContentStorage['get']>>;
  try {
    stream = await storage.get(key, range);
  } catch (error) {
    if (error instanceof ContentNotFoundError) throw new NotFoundError();
    throw error;
  }
  if (range) {
    reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${stat.size}`)
      .header('content-length', range.end - range.start + 1);
  } else {
    reply.header('content-length', stat.size);
  }
  return reply.send(stream);
}

/** Sends bytes made on request (the fax report) the same way. */
export function sendBytes(
  reply: FastifyReply,
  bytes: Uint8Array,
  options: Omit<SendOptions, 'ranges'>,
): FastifyReply {
  return reply
    .header('content-type', options.type)
    .header('content-disposition', options.inline ? 'inline' : 'attachment')
    .header('content-length', bytes.byteLength)
    .send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}
