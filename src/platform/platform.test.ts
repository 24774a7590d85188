/**
 * Conventions, Errors and Authentication, checked across every registered route: the generic
 * statuses come from the declared access level and schemas, in decisions.md's order.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import pino from 'pino';
import { build, buildUser, Client, loggedInClient, testEnv } from '../../test/helper.js';
import { buildApp } from '../app.js';
import { checkDownloadKey } from './access.js';
import { systemClock } from './clock.js';
import { ConfigError, loadConfig } from './config.js';
import { newUuid } from './ids.js';
import { createLogger, createServer, fastifyLogging, RequestLogger } from './server.js';

/** A concrete URL for a route pattern (path parameters become a fresh UUID). */
function concrete(url: string): string {
  return url.replace(/:[^/.]+/g, newUuid()).replace(/\*/g, 'x');
}

describe('generic statuses on every route', () => {
  test('every API route declares an access level', async (t) => {
    const app = await build(t);
    assert.ok(app.server.routeTable.length > 0);
    for (const route of app.server.routeTable) {
      assert.ok(
        ['none', 'session', 'auth', 'user', 'partner', 'device', 'internal'].includes(route.access),
        route.url,
      );
    }
  });

  test('no-session without a sid, no-auth for the wrong kind of session; binary routes answer an empty 404', async (t) => {
    const app = await build(t);
    const anonymous = new Client(app);
    await anonymous.open();
    for (const route of app.server.routeTable) {
      if (route.access === 'none') continue;
      const url = concrete(route.url);
      const method = route.method as 'GET' | 'POST' | 'DELETE';
      const bare = await app.server.inject({ method, url, payload: method === 'POST' ? {} : undefined });
      if (route.binary) {
        assert.equal(bare.statusCode, 404, `${method} ${route.url}`);
        assert.equal(bare.body, '', `${method} ${route.url}`);
        continue;
      }
      assert.equal(bare.statusCode, 200, `${method} ${route.url}`);
      assert.equal(bare.json().status, 'no-session', `${method} ${route.url}`);
      if (route.access !== 'session') {
        const answer = await anonymous.call(method, url, method === 'POST' ? {} : undefined);
        assert.equal(answer.status, 'no-auth', `${method} ${route.url}`);
      }
    }
  });

  test('wrong-origin when the Origin differs from the one the session was created with', async (t) => {
    const app = await build(t);
    const user = await buildUser(app);
    const client = new Client(app, { origin: 'https://app.example' });
    await client.login(user.username, user.password);
    const partner = new Client(app, { origin: 'https://app.example' });
    await partner.open();
    for (const route of app.server.routeTable) {
      if (route.access === 'none' || route.binary) continue;
      const method = route.method as 'GET' | 'POST' | 'DELETE';
      const answer = await app.server.inject({
        method,
        url: concrete(route.url),
        headers: { authorization: `Bearer ${client.sid}`, origin: 'https://evil.example' },
        payload: method === 'POST' ? {} : undefined,
      });
      // A user session on a partner or device route is no-auth first: origin comes after authentication.
      const expected = ['partner', 'device'].includes(route.access) ? 'no-auth' : 'wrong-origin';
      assert.equal(answer.json().status, expected, `${method} ${route.url}`);
    }
    // The same origin, and no Origin header at all (a non-browser client), are accepted.
    assert.equal((await client.call('GET', '/api/session')).status, 'ok');
    const noOrigin = await app.server.inject({
      url: '/api/session',
      headers: { authorization: `Bearer ${client.sid}` },
    });
    assert.equal(noOrigin.json().status, 'ok');
  });
});

describe('envelope', () => {
  test('unknown routes answer HTTP 404 with status fail', async (t) => {
    const app = await build(t);
    const answer = await app.server.inject('/api/no/such/route');
    assert.equal(answer.statusCode, 404);
    assert.deepEqual(answer.json(), { status: 'fail', message: 'unknown route' });
  });

  test('a body that is not JSON, or not labelled application/json, is wrong-syntax', async (t) => {
    const app = await build(t);
    const user = await buildUser(app);
    const client = new Client(app);
    await client.open();
    const headers = { authorization: `Bearer ${client.sid}` };
    for (const contentType of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
      const bad = await app.server.inject({
        method: 'POST',
        url: '/api/session',
        headers: { ...headers, 'content-type': contentType },
        payload: '{"username": ',
      });
      assert.equal(bad.statusCode, 200);
      assert.equal(bad.json().status, 'wrong-syntax');
    }
    // A cross-site text/plain POST never reaches the handler, however good its JSON.
    const plain = await app.server.inject({
      method: 'POST',
      url: '/api/session',
      headers: { ...headers, 'content-type': 'text/plain' },
      payload: JSON.stringify({ username: user.username, password: user.password }),
    });
    assert.equal(plain.json().status, 'wrong-syntax');
    const good = await app.server.inject({
      method: 'POST',
      url: '/api/session',
      headers: { ...headers, 'content-type': 'application/vnd.zentrale+json' },
      payload: JSON.stringify({ username: user.username, password: user.password }),
    });
    assert.equal(good.json().status, 'ok');
  });

  test('an empty body counts as {}: missing-element', async (t) => {
    const app = await build(t);
    const client = new Client(app);
    await client.open();
    const answer = await app.server.inject({
      method: 'POST',
      url: '/api/session',
      headers: { authorization: `Bearer ${client.sid}`, 'content-type': 'application/json' },
    });
    assert.equal(answer.json().status, 'missing-element');
  });

  test('an oversized body is too-large and changes nothing', async (t) => {
    const app = await build(t, { env: { MAX_JSON_BODY_SIZE: '2048' } });
    const user = await buildUser(app);
    const client = new Client(app);
    await client.open();
    const answer = await app.server.inject({
      method: 'POST',
      url: '/api/session',
      headers: { authorization: `Bearer ${client.sid}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        username: user.username,
        password: user.password,
        padding: 'x'.repeat(4096),
      }),
    });
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.json().status, 'too-large');
    assert.equal((await client.call('GET', '/api/session')).auth, false);
  });

  test('__proto__ in a body does not pollute objects', async (t) => {
    const app = await build(t);
    const client = new Client(app);
    await client.open();
    const answer = await app.server.inject({
      method: 'POST',
      url: '/api/session',
      headers: { authorization: `Bearer ${client.sid}`, 'content-type': 'application/json' },
      payload: '{"__proto__": {"polluted": true}, "username": "ab", "password": "12345"}',
    });
    assert.equal(answer.json().status, 'wrong-credentials');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('an unexpected failure answers fail with the request id and no internals', async (t) => {
    const app = await build(t);
    const user = await buildUser(app);
    await sql`ALTER TABLE "user" RENAME TO user_gone`.execute(app.database.db);
    const answer = await app.server.inject({
      method: 'POST',
      url: '/api/session',
      payload: { username: user.username, password: user.password },
    });
    assert.equal(answer.statusCode, 200);
    const body = answer.json();
    assert.equal(body.status, 'fail');
    assert.match(body.message, /^internal error \(request [^)]+\)$/);
    assert.doesNotMatch(answer.body, /at .*\.ts|Error:|stack/);
  });

  test('gzip when the client accepts it', async (t) => {
    const app = await build(t);
    const answer = await app.server.inject({
      url: '/api/openapi.json',
      headers: { 'accept-encoding': 'gzip' },
    });
    assert.equal(answer.headers['content-encoding'], 'gzip');
    const document = JSON.parse(gunzipSync(answer.rawPayload).toString('utf8'));
    assert.equal(document.openapi, '3.1.0');
    const plain = await app.server.inject({ url: '/api/openapi.json' });
    assert.equal(plain.headers['content-encoding'], undefined);
  });

  test('gzip from 1024 bytes of answer on, counted in bytes, not characters', async (t) => {
    const config = loadConfig(await testEnv(t));
    const resolver = {
      findBySid: () => undefined,
      findByDid: () => undefined,
      hasPermission: async () => false,
    };
    const server = await createServer(config, resolver, createLogger(config), systemClock);
    t.after(() => server.close());
    // Answers of 1023 and 1024 bytes; the last two of 400 characters (at most 1,200 bytes).
    const answers: Record<string, string> = {
      small: 'a'.repeat(1023 - '{"text":""}'.length),
      large: 'a'.repeat(1024 - '{"text":""}'.length),
      'small-wide': 'ü'.repeat(400),
      'large-wide': '€'.repeat(400),
    };
    for (const [name, text] of Object.entries(answers))
      server.get(`/api/test/${name}`, { config: { access: 'none' } }, async () => ({ text }));
    await server.ready();
    const expected = { small: undefined, large: 'gzip', 'small-wide': undefined, 'large-wide': 'gzip' };
    for (const [name, encoding] of Object.entries(expected)) {
      const answer = await server.inject({
        url: `/api/test/${name}`,
        headers: { 'accept-encoding': 'gzip' },
      });
      assert.equal(answer.headers['content-encoding'], encoding, name);
      const body = encoding ? gunzipSync(answer.rawPayload).toString('utf8') : answer.body;
      assert.equal(JSON.parse(body).text, answers[name], name);
      assert.equal(answer.headers['x-content-type-options'], 'nosniff', name);
    }
  });
});

describe('OpenAPI', () => {
  test('GET /api/openapi.json documents every route with its schemas; /api/docs serves the reference', async (t) => {
    const app = await build(t);
    const document = (await app.server.inject('/api/openapi.json')).json();
    const internal = (await app.server.inject('/api/internal/openapi.json')).json();
    assert.equal(document.openapi, '3.1.0');
    for (const route of app.server.routeTable) {
      const path = route.url.replace(/:([^/.]+)/g, '{$1}');
      const where = route.access === 'internal' ? internal : document;
      assert.ok(where.paths[path]?.[route.method.toLowerCase()], `${route.method} ${route.url} missing`);
    }
    const session = document.paths['/api/session'].get;
    const [success] = session.responses['200'].content['application/json'].schema.oneOf;
    assert.ok(success.properties.next_event);
    const docs = await app.server.inject('/api/docs/');
    assert.equal(docs.statusCode, 200);
    assert.match(docs.body, /swagger/i);
  });
});

test('every integer a request may send is bounded to what both databases hold', async (t) => {
  const app = await build(t);
  type Paths = Record<string, Record<string, { parameters?: { schema: unknown }[]; requestBody?: unknown }>>;
  const paths: Paths = {};
  for (const url of ['/api/openapi.json', '/api/internal/openapi.json']) {
    Object.assign(paths, ((await app.server.inject(url)).json() as { paths: Paths }).paths);
  }
  const unbounded: string[] = [];
  const walk = (node: unknown, where: string) => {
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (
      record.type === 'integer' &&
      (typeof record.maximum !== 'number' || typeof record.minimum !== 'number')
    )
      unbounded.push(where);
    for (const [key, value] of Object.entries(record)) walk(value, `${where}.${key}`);
  };
  let integers = 0;
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const text = JSON.stringify([operation.parameters ?? [], operation.requestBody ?? {}]);
      integers += text.split('"integer"').length - 1;
      walk([operation.parameters ?? [], operation.requestBody ?? {}], `${method} ${path}`);
    }
  }
  assert.ok(integers > 50, `${integers} request integers`);
  assert.deepEqual(unbounded, []);
  // A value past a 4-byte column is refused before any query: wrong-syntax.
  const { client } = await loggedInClient(app);
  const answer = await client.call('GET', '/api/ivr?count=2147483648');
  assert.equal(answer.status, 'wrong-syntax');
});

describe('download id', () => {
  test('dkey is base64url of the MD5 of the lower-case UUID and the sid', () => {
    const uuid = 'AB9C1E20-0000-1000-8000-000000000001';
    const sid = 'the-session-id';
    const dkey = createHash('md5')
      .update(uuid.toLowerCase() + sid)
      .digest('base64url');
    assert.ok(checkDownloadKey(uuid, sid, dkey));
    assert.ok(!checkDownloadKey(uuid, 'other-sid', dkey));
    assert.ok(!checkDownloadKey(uuid, sid, `${dkey}x`));
    assert.ok(!checkDownloadKey(uuid, sid, ''));
  });
});

describe('configuration', () => {
  test('defaults follow decisions.md', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.publicUrl, 'http://127.0.0.1:8080');
    assert.equal(config.sessionRateLimit, 60);
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.maxUploadSize, 20 * 1024 * 1024);
    assert.equal(config.mediaNice, -10);
    assert.equal(loadConfig({ MEDIA_NICE: '-5' }).mediaNice, -5);
    assert.equal(loadConfig({ MEDIA_NICE: '3' }).mediaNice, 3);
    assert.ok(Object.isFrozen(config));
  });

  test('bad values are refused with a message naming the variable', () => {
    for (const [name, value] of [
      ['PORT', 'eighty'],
      ['PORT', '70000'],
      ['DATABASE_URL', 'mysql://localhost/x'],
      ['PUBLIC_URL', 'not a url'],
      ['SESSION_RATE_LIMIT', '-1'],
      ['LOG_LEVEL', 'loud'],
      ['SMTP_URL', 'http://mail'],
      ['MEDIA_NICE', '-21'],
      ['MEDIA_NICE', '20'],
      ['MEDIA_NICE', '--5'],
      ['PORT', '-1'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes(name),
      );
    }
  });
});

describe('sessions and users across a login', () => {
  test('a logged-in client sees auth true', async (t) => {
    const app = await build(t);
    const { client } = await loggedInClient(app);
    assert.equal((await client.call('GET', '/api/session')).auth, true);
  });
});

describe('request loggers', () => {
  /** A node whose process logger writes its JSON lines into `lines`. */
  async function loggingApp(t: TestContext, level: string) {
    const lines: Record<string, unknown>[] = [];
    const destination = { write: (line: string) => void lines.push(JSON.parse(line)) };
    const config = loadConfig(await testEnv(t, 'sqlite', { LOG_LEVEL: level }));
    const app = await buildApp(config, createLogger(config, destination));
    t.after(() => app.close());
    return { app, lines };
  }

  test('at level info a request that logs nothing makes no child; its first line makes one, with its id', () => {
    const made: pino.Bindings[] = [];
    const lines: Record<string, unknown>[] = [];
    // A pino logger whose children, and theirs, count as they are made.
    const counting = (logger: pino.Logger): pino.Logger =>
      Object.assign(Object.create(logger) as pino.Logger, {
        child: (bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => {
          made.push(bindings);
          return counting(logger.child(bindings, options));
        },
      });
    const parent = counting(
      pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
    );
    const factory = fastifyLogging(parent, 'info').options.childLoggerFactory;
    assert.ok(factory);
    assert.deepEqual(made, [{}]); // made once at start, for Fastify's own lines
    const quiet = factory.call(null as never, parent, { request: 'r1' }, {}, null as never);
    const talking = factory.call(null as never, parent, { request: 'r2' }, {}, null as never);
    assert.equal(made.length, 1);
    talking.info({ n: 1 }, 'first');
    talking.error('second');
    assert.deepEqual(made, [{}, { request: 'r2' }]);
    assert.ok(quiet instanceof RequestLogger && !quiet.made);
    assert.deepEqual(
      lines.map((line) => [line.request, line.msg, line.n]),
      [
        ['r2', 'first', 1],
        ['r2', 'second', undefined],
      ],
    );
  });

  /** A bare server at a level whose process logger writes into `lines`, with two test routes. */
  async function serverAt(t: TestContext, level: string) {
    const lines: Record<string, unknown>[] = [];
    const config = loadConfig(await testEnv(t, 'sqlite', { LOG_LEVEL: level }));
    const log = createLogger(config, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const resolver = {
      findBySid: () => undefined,
      findByDid: () => undefined,
      hasPermission: async () => false,
    };
    const server = await createServer(config, resolver, log, systemClock);
    t.after(() => server.close());
    // Fastify times an answer with a 'finish' and an 'error' listener on the response.
    const seen = { errorListeners: -1 };
    server.get('/api/test/quiet', { config: { access: 'none' } }, async (_request, reply) => {
      seen.errorListeners = reply.raw.listenerCount('error');
      return { status: 'ok' };
    });
    server.get('/api/test/boom', { config: { access: 'none' } }, async (request) => {
      request.log.info('about to fail');
      throw new Error('kaput');
    });
    await server.ready();
    return { server, lines, seen };
  }

  test('at level info what a request logs, and a 5xx, carry the id the client is told; Fastify still logs where it listens', async (t) => {
    const { server, lines, seen } = await serverAt(t, 'info');
    const answer = (await server.inject({ url: '/api/test/boom' })).json();
    const id = /request (\S+)\)/.exec(answer.message)?.[1];
    assert.ok(id, answer.message);
    assert.deepEqual(
      lines.map((line) => [line.msg, line.request, line.level]),
      [
        ['about to fail', id, 30],
        ['unexpected error', id, 50],
      ],
    );
    assert.equal((lines[1]?.err as { message?: string } | undefined)?.message, 'kaput');
    // Below debug a request writes no lines of its own, and Fastify does not time it.
    await server.inject({ url: '/api/test/quiet' });
    assert.equal(lines.length, 2);
    const debug = await serverAt(t, 'debug');
    await debug.server.inject({ url: '/api/test/quiet' });
    assert.equal(seen.errorListeners + 1, debug.seen.errorListeners);
    await server.listen({ port: 0, host: '127.0.0.1' });
    assert.match(String(lines[2]?.msg), /^Server listening at http:\/\/127\.0\.0\.1:\d+$/);
  });

  test('at level debug request lines are written, each with the request id', async (t) => {
    const { app, lines } = await loggingApp(t, 'debug');
    await app.server.inject({ method: 'GET', url: '/api/session' });
    const requestLines = lines.filter(
      (line) => line.msg === 'incoming request' || line.msg === 'request completed',
    );
    assert.equal(requestLines.length, 2);
    assert.equal(typeof requestLines[0]?.request, 'string');
    assert.equal(requestLines[0]?.request, requestLines[1]?.request);
    assert.equal(typeof requestLines[1]?.responseTime, 'number');
  });

  test('at level silent a request logs through the one logger made at start', () => {
    const parent = pino({ level: 'silent' });
    const { options, serverLog } = fastifyLogging(parent, 'silent');
    assert.ok(serverLog && options.childLoggerFactory);
    assert.equal(
      options.childLoggerFactory.call(null as never, parent, { request: 'r' }, {}, null as never),
      serverLog,
    );
  });
});
