/**
 * Conventions 3-4 and "Errors": HTTP 200 with `status` on every JSON answer, `message` when not
 * ok; HTTP 404 with an empty body for failed binary downloads; unknown routes; unexpected
 * errors logged with the request id and answered `fail` without internals.
 */
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
