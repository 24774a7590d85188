/**
 * Conventions 3-4 and "Errors": HTTP 200 with `status` on every JSON answer, `message` when not
 * ok; HTTP 404 with an empty body for failed binary downloads; unknown routes; unexpected
 * errors logged with the request id and answered `fail` without internals.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, NotFoundError } from './errors.js';

interface ErrorBody {
  status: string;
  message?: string;
}

function classify(error: FastifyError | Error, request: FastifyRequest): ErrorBody | undefined {
  if (error instanceof ApiError) return { status: error.status, message: error.message };
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return { status: 'too-large', message: 'request body too large' };
  const statusCode = (error as FastifyError).statusCode;
  // Fastify's own 4xx errors are about the request's form: unparsable JSON, bad content type.
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
    return {
      status: 'wrong-syntax',
      message: code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'invalid JSON' : 'bad request',
    };
  }
  request.log.error({ err: error }, 'unexpected error');
  return undefined;
}

function sendJson(reply: FastifyReply, body: ErrorBody): FastifyReply {
  // The route's response schema describes success; errors are serialised plainly.
  return reply.code(200).type('application/json; charset=utf-8').serializer(JSON.stringify).send(body);
}

export function registerEnvelope(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    const binary = request.routeOptions.config?.binary === true;
    const body = error instanceof NotFoundError ? undefined : classify(error, request);
    if (binary && (body === undefined || body.status !== 'ok')) {
      return reply.code(404).removeHeader('content-type').send();
    }
    return sendJson(reply, body ?? { status: 'fail', message: `internal error (request ${request.id})` });
  });

  app.setNotFoundHandler((_request, reply) => {
    return reply
      .code(404)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify({ status: 'fail', message: 'unknown route' }));
  });
}

// Every binary download of the API names a file with one of these extensions.
const BINARY_PATH = /\.(png|pdf|tif|wav|ogg|csv)$/i;

/**
 * Requests the router cannot take apart (a broken percent escape, an over-long parameter):
 * a parameter that cannot be decoded is wrong-syntax, or HTTP 404 with an empty body where the
 * path names a binary download. The path is never echoed back.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  request.log.debug({ code: error.code }, 'request the router could not decode');
  const path = (request.raw.url ?? '').split('?', 1)[0] ?? '';
  // Answered before any body was read: the connection closes, so the body is never a next request.
  if (request.raw.complete === false) reply.header('connection', 'close');
  if (request.raw.method === 'GET' && BINARY_PATH.test(path)) {
    void reply.code(404).send();
    return;
  }
  void sendJson(reply, { status: 'wrong-syntax', message: 'path cannot be decoded' });
}

/**
 * Requests Node's HTTP parser rejects before any routing, and the connection closed. They are the
 * client's: raw bytes in the path, a control byte in a header name are wrong-syntax; a request
 * line or headers beyond the header limit (a 100 KB path or query) too-large. A request that did
 * not arrive in time is fail, as the README's REQUEST_TIMEOUT says: the server cannot tell a slow
 * client from its own stalled reading.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const answer =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? { status: 'fail', message: 'request timeout' }
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? { status: 'too-large', message: 'request line or headers too large' }
        : { status: 'wrong-syntax', message: 'malformed request' };
  const body = JSON.stringify(answer);
  socket.end(
    `HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `x-content-type-options: nosniff\r\ncache-control: no-store\r\nconnection: close\r\n\r\n${body}`,
  );
}
