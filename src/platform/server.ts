/**
 * The HTTP server every area plugs its routes into: Fastify with one validation path, one
 * envelope, the access levels, gzip, cookies and the OpenAPI document built from the routes'
 * own schemas.
 */
import type { IncomingMessage } from 'node:http';
import compress from '@fastify/compress';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
  type RawServerDefault,
} from 'fastify';
import pino from 'pino';
import { registerAccess, type SessionResolver } from './access.js';
import { registerAlternatives } from './alternatives.js';
import { assertStorableRequestText, lingerBeforeClose, registerBodyParser } from './body.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import { answerClientError, answerFrameworkError, registerEnvelope } from './envelope.js';
import { buildDocuments, type DocumentedRoute, type Documents } from './openapi/document.js';
import { openapiWebhooks } from './openapi-webhooks.js';
import { registerValidation } from './validation.js';

export type AppInstance = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  import('node:http').ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export const API_VERSION = '1.16.0';

/** A registered API route and its declaration (for checks, tests and the OpenAPI document). */
export interface RouteEntry extends DocumentedRoute {
  method: string;
  url: string;
  access: string;
  binary: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    routeTable: RouteEntry[];
  }
}

// Query parameters that carry credentials: the sid, and the dkey that proves it.
const SECRET_PARAMS = /([?&](?:sid|dkey)=)[^&#]*/gi;

/** A request URL as it may be logged: sid and dkey values replaced. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

// Fastify's request lines name the request by these; the URL is logged without its secrets (a
// redact path cannot reach inside the URL string).
const LOG_SERIALIZERS = {
  req: (req: { method: string; url: string; ip?: string }) => ({
    method: req.method,
    url: redactUrl(req.url),
    remoteAddress: req.ip,
  }),
  res: (reply: { statusCode: number }) => ({ statusCode: reply.statusCode }),
};

/**
 * The process logger (pino, pretty on a terminal); Fastify and every service use it. Fastify
 * takes the `serializers` property of a logger instance for its request lines.
 */
export function createLogger(config: Config, destination?: pino.DestinationStream): FastifyBaseLogger {
  const logger = destination ? pino(loggerOptions(config), destination) : pino(loggerOptions(config));
  return Object.assign(logger, { serializers: LOG_SERIALIZERS });
}

function loggerOptions(config: Config) {
  const pretty = process.stdout.isTTY && config.logLevel !== 'silent';
  return {
    level: config.logLevel,
    // Secrets travel in these; they never reach the log.
    redact: ['req.headers.authorization', 'req.headers.cookie', 'req.query.sid', 'req.query.dkey'],
    ...(pretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' },
          },
        }
      : {}),
  };
}

type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger whose pino child, bound to the request's id, is made by the first line
 * the request writes: nearly every request writes none.
 */
export class RequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: pino.Bindings;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: pino.Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  /** Whether the request has written (or asked for its child), for tests. */
  get made(): boolean {
    return this.#child !== undefined;
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#made().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): FastifyBaseLogger {
    return this.#made().child(bindings, options);
  }

  #made(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings);
    return this.#child;
  }

  #write(level: LogLevel, args: unknown[]): void {
    const log = this.#made();
    (log[level] as (...args: unknown[]) => void).apply(log, args);
  }
}

/**
 * Fastify's logging at a level. Request lines (incoming, completed) only at debug and trace: at
 * full load they would cost more than the calls. There Fastify is given the process logger and
 * makes a pino child per request and times every answer for those lines. It does both whenever
 * it has a logger, lines or not (a 'finish' and an 'error' listener on each response: 5–6 % of a
 * GET's CPU with the child, docs/benchmarks.md "The request path"), so at any other level it is
 * given none: a request's logger is a RequestLogger, bound to the request id under the same
 * label as Fastify's child, and Fastify's own lines (where it listens, a failed onListen hook)
 * go to `serverLog`, to be set as the instance's `log`. At level silent nothing is written, and
 * a request logs through `serverLog`.
 */
export function fastifyLogging(
  log: FastifyBaseLogger,
  logLevel: string,
): {
  options: Pick<FastifyServerOptions, 'loggerInstance' | 'childLoggerFactory' | 'logController'>;
  serverLog?: FastifyBaseLogger;
} {
  const requestLines = logLevel === 'debug' || logLevel === 'trace';
  const logController = new LogController({
    requestIdLogLabel: 'request',
    disableRequestLogging: !requestLines,
  });
  if (requestLines) return { options: { loggerInstance: log, logController } };
  // What Fastify makes of a logger instance: a child with its serializers, here made once.
  const serverLog = log.child({}, { serializers: LOG_SERIALIZERS });
  // Fastify passes its own parent first, a null logger when it has none; a route's own level or
  // serializers (no route sets them) would come in the options.
  const childLoggerFactory: FastifyServerOptions['childLoggerFactory'] =
    logLevel === 'silent'
      ? () => serverLog
      : (_nullLogger, bindings, options) =>
          options.level || options.serializers
            ? serverLog.child(bindings, options)
            : new RequestLogger(serverLog, bindings);
  return { options: { childLoggerFactory, logController }, serverLog };
}

/** Answers of at least this many bytes are gzipped for clients that accept it. */
const COMPRESS_THRESHOLD = 1024;

// A string of fewer UTF-16 units than this is under the threshold whatever it holds (at most
// 3 bytes of UTF-8 per unit).
const SURELY_SMALL = Math.ceil(COMPRESS_THRESHOLD / 3);

/**
 * @fastify/compress leaves a JSON answer under the threshold as it is, but only after reading
 * four headers and matching the content type, on every request (about 4 % of a GET's CPU,
 * docs/benchmarks.md "The request path"). Most answers are a few hundred bytes: they pass its
 * hook at once here. Its onRoute hook has just put its hooks last on each route it compresses,
 * so this onRoute hook, registered right after the plugin, finds them there. Its onRequest hook
 * only gives each reply a `reply.compress()`, which no route calls: it goes.
 */
function skipCompressForSmallText(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.compress === false) return;
    const { onRequest, onSend } = route;
    // A newer plugin that adds its hooks otherwise must not lose a route's own hooks.
    if (
      !Array.isArray(onRequest) ||
      onRequest.at(-1)?.name !== 'onRequest' ||
      !Array.isArray(onSend) ||
      onSend.at(-1)?.name !== 'onSend'
    )
      throw new Error(`@fastify/compress did not add its hooks to ${route.url} as expected`);
    onRequest.pop();
    const compressAnswer = onSend[onSend.length - 1]!;
    onSend[onSend.length - 1] = function compressLargeAnswer(request, reply, payload, done) {
      if (
        typeof payload === 'string' &&
        (payload.length < SURELY_SMALL ||
          (payload.length < COMPRESS_THRESHOLD && Buffer.byteLength(payload) < COMPRESS_THRESHOLD))
      ) {
        done(null, payload);
        return;
      }
      return compressAnswer.call(this, request, reply, payload, done);
    };
  });
}

export async function createServer(
  config: Config,
  resolver: SessionResolver,
  log: FastifyBaseLogger,
  clock: Clock,
): Promise<AppInstance> {
  const logging = fastifyLogging(log, config.logLevel);
  const app = Fastify({
    bodyLimit: Math.max(config.maxJsonBodySize, config.maxUploadSize),
    ...logging.options,
    // Long path parameters reach the route, whose own schema answers wrong-syntax or wrong-*.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    forceCloseConnections: false,
    // No request may wait without end: headers and body must arrive within the bound.
    requestTimeout: config.requestTimeout * 1000,
    // Node checks those bounds only every connectionsCheckingInterval (30 s by default).
    http: {
      connectionsCheckingInterval: 1000,
      headersTimeout: Math.min(config.requestTimeout, 60) * 1000,
      requestTimeout: config.requestTimeout * 1000,
    },
    trustProxy: config.trustProxy,
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (logging.serverLog) app.log = logging.serverLog;

  // Every API route must say who may call it; a route without an access level never starts.
  app.decorate('routeTable', [] as RouteEntry[]);
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') || route.schema?.hide || route.method === 'HEAD') return;
    const access = route.config?.access;
    if (!access) throw new Error(`route ${String(route.method)} ${route.url} declares no access level`);
    for (const method of [route.method].flat()) {
      const { upload, didParam, statuses, mediaType, binary } = route.config ?? {};
      app.routeTable.push({
        method,
        url: route.url,
        access,
        binary: binary === true,
        ...(upload ? { upload } : {}),
        ...(didParam ? { didParam } : {}),
        ...(statuses ? { statuses } : {}),
        ...(mediaType ? { mediaType } : {}),
      });
    }
  });
  registerEnvelope(app);
  registerValidation(app);
  registerAlternatives(app);
  registerBodyParser(app, config.maxJsonBodySize);
  app.addHook('preValidation', assertStorableRequestText);
  await app.register(cookie);
  // Request bodies are decoded by the body parser itself, within its size bound.
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    encodings: ['gzip'],
    threshold: COMPRESS_THRESHOLD,
  });
  skipCompressForSmallText(app);
  // Set first, so that a download route may still choose its own cache-control. A callback
  // hook: an async one costs a promise on every request.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('cache-control', 'no-store');
    done();
  });
  // An answer sent before the request's body has all arrived (access refused in onRequest, say)
  // closes the connection, so that the rest of the body is never read as a next request.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.raw.complete === false) {
      reply.header('connection', 'close');
      lingerBeforeClose(request.raw);
    }
    done(null, payload);
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Zentrale API',
        version: API_VERSION,
        description:
          'Cloud telephony and collaboration API. Every JSON answer is HTTP 200 with `status`; see the README.',
      },
      webhooks: openapiWebhooks,
    },
  });
  // Built once, on first request, when every route is known (src/platform/openapi/document.ts).
  let documents: Documents | undefined;
  const published = () => {
    documents ??= buildDocuments(app.swagger(), app.routeTable);
    return documents;
  };
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    transformSpecification: () => published().public,
  });
  registerAccess(app, resolver, clock);
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => published().public);
  app.get('/api/internal/openapi.json', { schema: { hide: true } }, async () => published().internal);
  return app;
}
