/**
 * Request bodies (Conventions 2, "Errors"): JSON bodies are read here, once, with every bound
 * applied before a handler sees them; raw uploads pass through as streams.
 *
 * - Only `application/json` (or `+json`) bodies reach a JSON handler: a cross-site form or
 *   text/plain POST is wrong-syntax before any handler runs.
 * - `Content-Encoding` gzip and deflate are accepted for JSON bodies; the size bound applies to
 *   the decompressed bytes, so a small bomb is too-large after at most `limit` bytes of output.
 *   Any other encoding (br, compress, unknown) is wrong-syntax at once, as is any encoding on a
 *   raw upload.
 * - Nesting deeper than MAX_JSON_DEPTH is wrong-syntax, checked by a linear scan before parsing,
 *   so that no later code walks client data by unbounded recursion.
 * - A string (key or value) holding NUL or a lone surrogate is wrong-syntax: both databases
 *   then store the same text (PostgreSQL refuses both).
 * - The same holds for query strings and path parameters (`%00` decodes to NUL).
 * - `__proto__` and `constructor` keys are dropped, so a body's keys never reach prototypes.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from './errors.js';

/** Deepest accepted nesting of arrays and objects in a JSON body. */
export const MAX_JSON_DEPTH = 64;

// String.prototype.isWellFormed (ES2024, in Node 20) is false for lone surrogates.
type WellFormed = string & { isWellFormed(): boolean };

/** True when a string may be stored as text in both databases: no NUL, no lone surrogate. */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && (value as WellFormed).isWellFormed();
}

/** Depth of the deepest array/object in JSON text, stopping early past `max`. */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Checks every key, string and number of parsed JSON (depth already bounded) without recursion:
 * JSON.parse turns 1e400 into Infinity, which no column holds.
 */
function assertStorableValues(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new ApiError('wrong-syntax', 'number out of range');
    } else if (typeof value === 'string') {
      if (!isStorableText(value)) throw new ApiError('wrong-syntax', 'text holds NUL or a lone surrogate');
    } else if (Array.isArray(value)) {
      stack.push(...value);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (!isStorableText(key)) throw new ApiError('wrong-syntax', 'key holds NUL or a lone surrogate');
        stack.push(item);
      }
    }
  }
}

function isJsonType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

function decoderFor(encoding: string): zlib.Gunzip | zlib.Inflate | undefined | null {
  switch (encoding) {
    case '':
    case 'identity':
      return undefined;
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    default:
      return null;
  }
}

/** What the server still reads of a body it answered early, and how long, before it closes. */
export const DRAIN_BYTES = 64 * 1024 * 1024;
export const DRAIN_MS = 10_000;
const lingering = new WeakSet<Socket>();

/**
 * An answer sent before the request's body has all arrived (too-large, access refused) closes
 * the connection; closing it at once while the client still sends makes the kernel reset it, and
 * the client loses the answer (ECONNRESET, EPIPE). So the server half-closes after the answer and
 * reads on, discarding, until the client stops sending or DRAIN_BYTES or DRAIN_MS run out.
 */
export function lingerBeforeClose(request: IncomingMessage): void {
  const socket = request.socket as Socket & { destroySoon?: () => void };
  if (lingering.has(socket)) return;
  lingering.add(socket);
  // Node's server calls destroySoon once a `connection: close` answer is written.
  socket.destroySoon = () => {
    let drained = 0;
    const close = () => socket.destroy();
    const timer = setTimeout(close, DRAIN_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', close);
    socket.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > DRAIN_BYTES) close();
    });
    socket.end();
    // The body stream may have been left paused: its bytes must still be taken off the wire.
    request.resume();
    socket.resume();
  };
}

/**
 * Reads at most `limit` bytes of the (decoded) body; rejects with too-large beyond and discards
 * the rest rather than destroying the stream (which would reset the connection before the
 * answer is read).
 */
function readBounded(source: Readable, limit: number, discardRest: () => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    source.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        fail(new ApiError('too-large', 'request body too large'));
        chunks.length = 0;
        discardRest();
        return;
      }
      chunks.push(chunk);
    });
    source.on('error', (error) =>
      fail(error instanceof ApiError ? error : new ApiError('wrong-syntax', 'body could not be read')),
    );
    source.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks));
    });
  });
}

export function parseJsonText(text: string): unknown {
  if (text.trim() === '') return undefined;
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    throw new ApiError('wrong-syntax', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch {
    throw new ApiError('wrong-syntax', 'invalid JSON');
  }
  assertStorableValues(value);
  return value;
}

async function readJsonBody(request: FastifyRequest, payload: Readable, limit: number): Promise<unknown> {
  const encoding = String(request.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder = decoderFor(encoding);
  if (decoder === null) {
    payload.resume();
    throw new ApiError('wrong-syntax', 'unsupported content-encoding');
  }
  // A JSON route whose client sent nothing at all is judged as if it sent `{}` later on.
  if (!isJsonType(request.headers['content-type'])) {
    payload.resume();
    throw new ApiError('wrong-syntax', 'body must be application/json');
  }
  const source = decoder ? payload.pipe(decoder) : payload;
  if (decoder) payload.on('error', (error) => decoder.destroy(error));
  // Past the bound a decoder stops (a bomb is not inflated further); the raw bytes still drain.
  const discardRest = () => {
    if (decoder) {
      payload.unpipe(decoder);
      decoder.destroy();
    }
    payload.resume();
  };
  const bytes = await readBounded(source, limit, discardRest);
  if (decoder) payload.resume();
  return parseJsonText(bytes.toString('utf8'));
}

/** Registers the one body parser of the server (replacing Fastify's own). */
export function registerBodyParser(app: FastifyInstance, limit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    if (request.routeOptions.config.upload) {
      const encoding = String(request.headers['content-encoding'] ?? '').toLowerCase();
      if (encoding !== '' && encoding !== 'identity') {
        done(new ApiError('wrong-syntax', 'uploads take no content-encoding'), undefined);
        return;
      }
      done(null, payload);
      return;
    }
    readJsonBody(request, payload, limit).then(
      (body) => done(null, body),
      (error: Error) => done(error, undefined),
    );
  });
}

/** preValidation: query and path parameters hold storable text only (see above). */
export function assertStorableRequestText(
  request: FastifyRequest,
  _reply: unknown,
  done: (error?: Error) => void,
): void {
  for (const part of [request.query, request.params]) {
    if (part === null || typeof part !== 'object') continue;
    for (const key in part) {
      const value = (part as Record<string, unknown>)[key];
      const texts = Array.isArray(value) ? value : [value];
      if (texts.some((text) => typeof text === 'string' && !isStorableText(text))) {
        done(new ApiError('wrong-syntax', 'parameter holds NUL or a lone surrogate'));
        return;
      }
    }
  }
  done();
}

/** Reads a raw upload whole, at most `limit` bytes (too-large beyond); an empty body is an empty file. */
export async function readUploadBody(body: unknown, limit: number, declaredLength?: string): Promise<Buffer> {
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
