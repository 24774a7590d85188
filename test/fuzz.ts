/**
 * The API fuzz: every operation of GET
 * /api/openapi.json called with generated bad bodies, queries and path parameters, as the
 * owner of the fixtures, another user, no session and an unauthenticated session. Each answer
 * is checked against the conventions (README "How the API behaves"): never HTTP 5xx; JSON
 * answers HTTP 200 with `ok` or a status of the closed union (src/platform/errors.ts), and never
 * `fail`; binary downloads 404 with an empty body on failure; and a failed POST or DELETE
 * leaves every table as it was. Seeded, so a run is the same each time. Used by
 * src/platform/fuzz.test.ts (a moderate run) and bench/fuzz.ts (a large one).
 */
import crypto from 'node:crypto';
import net from 'node:net';
import zlib from 'node:zlib';
import { sql } from 'kysely';
import type { App } from '../src/app.js';
import { isApiStatus } from '../src/platform/errors.js';
import { Client, loggedInClient } from './helper.js';
import { seeded } from './seeded.js';

type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  minimum?: number;
  pattern?: string;
};

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  schema: Schema;
}

export interface Operation {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  parameters: Parameter[];
  body: Schema | undefined;
  /** A binary download: no JSON answer declared. */
  binary: boolean;
}

export type Identity = 'owner' | 'other' | 'none' | 'unauth';
const IDENTITIES: readonly Identity[] = ['owner', 'other', 'none', 'unauth'];

export interface Defect {
  readonly request: string;
  readonly problem: string;
}

export interface FuzzResult {
  requests: number;
  /** Answers by status (`http-404` for binary downloads refused, `binary` for ones served). */
  byStatus: Record<string, number>;
  defects: Defect[];
}

/** The operations of the app's OpenAPI documents (the public and the internal one). */
export async function operationsOf(app: App): Promise<Operation[]> {
  const paths: [string, Record<string, Record<string, unknown>>][] = [];
  for (const url of ['/api/openapi.json', '/api/internal/openapi.json']) {
    const doc = (await app.server.inject({ method: 'GET', url })).json() as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    paths.push(...Object.entries(doc.paths));
  }
  // In the order of route registration, as one document listed them before the internal API
  // had its own: the fuzz picks every slowEvery-th operation by its index.
  const order = new Map<string, number>();
  for (const route of app.server.routeTable) {
    const path = route.url.replace(/:([^/.]+)/g, '{$1}');
    if (!order.has(path)) order.set(path, order.size);
  }
  paths.sort(([a], [b]) => (order.get(a) ?? order.size) - (order.get(b) ?? order.size));
  const operations: Operation[] = [];
  for (const [path, methods] of paths) {
    for (const [method, op] of Object.entries(methods)) {
      const requestBody = op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined;
      const responses = op.responses as Record<string, { content?: Record<string, unknown> }> | undefined;
      operations.push({
        method: method.toUpperCase() as Operation['method'],
        path,
        parameters: (op.parameters as Parameter[] | undefined) ?? [],
        body: requestBody?.content?.['application/json']?.schema,
        // A download answers a file, not JSON.
        binary: method === 'get' && !responses?.['200']?.content?.['application/json'],
      });
    }
  }
  return operations;
}

// ---- values ----

const HUGE = 'x'.repeat(100_000);
const UNICODE = ['a\u0000b', '\ud800', 'x\udfffy', '😀'.repeat(50), '\u202e\u200b', 'é'.normalize('NFD')];
const NUMBERS = [
  -1,
  0,
  -0,
  2 ** 31,
  2 ** 53 + 2,
  -(2 ** 63),
  1e308,
  Number.MIN_VALUE,
  0.5,
  999_999_999_999_999,
];
const BAD_PATH = [
  '',
  '%',
  '%zz',
  '%00',
  '%c0%af',
  '%ED%A0%80',
  '%F0%9F%98%80',
  '..',
  '%2e%2e%2f',
  ';',
  'a'.repeat(5000),
  '00000000-0000-1000-8000-000000000000',
  'ZZZZZZZZ-0000-1000-8000-000000000000',
  '-1',
  '1e400',
  '+99999999999999999999999',
];
/** Numbers at and past what the databases' integer columns hold (int4, int8, a double's integers). */
const NUMERIC_EDGES = [
  '2147483647',
  '2147483648',
  '-2147483649',
  '9007199254740991',
  '9007199254740993',
  '9223372036854775808',
  '1e20',
];

const BAD_QUERY = [
  '',
  '%',
  '%00',
  '-1',
  '1e400',
  'Infinity',
  'NaN',
  'a'.repeat(5000),
  '%ED%A0%80',
  'true',
  '[]',
  ...NUMERIC_EDGES,
];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

/** A value of the schema's shape, valid as far as a simple reading of the schema goes. */
function sample(schema: Schema | undefined, fixtures: Fixtures, depth = 0): unknown {
  if (!schema || depth > 6) return 'x';
  if (schema.enum) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const variant = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (variant) return sample(variant, fixtures, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(schema.properties ?? {}))
        out[key] = sample(property, fixtures, depth + 1);
      return out;
    }
    case 'array':
      return [sample(schema.items, fixtures, depth + 1)];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'uuid' || /\[0-9a-f\]\{8\}/i.test(schema.pattern ?? '')) return fixtures.uuid;
      if (/\\\+/.test(schema.pattern ?? '')) return '+4930123456';
      return 'abcdef';
    default:
      return {};
  }
}

function wrongType(value: unknown, random: () => number): unknown {
  if (typeof value === 'string') return pick(random, [1, true, null, [], {}]);
  if (typeof value === 'number') return pick(random, ['1', null, [], 1.5, '1e400']);
  if (typeof value === 'boolean') return pick(random, ['true', 1, null]);
  if (Array.isArray(value)) return pick(random, ['a', {}, 1, new Array(2000).fill(value[0] ?? 1)]);
  return pick(random, ['a', [], 1, null]);
}

function nested(levels: number): string {
  return `${'['.repeat(levels)}1${']'.repeat(levels)}`;
}

/** One generated bad body as JSON text (or not quite JSON), from the operation's schema. */
function badBody(op: Operation, fixtures: Fixtures, random: () => number): string {
  const base = sample(op.body, fixtures);
  const object = (base && typeof base === 'object' && !Array.isArray(base) ? base : {}) as Record<
    string,
    unknown
  >;
  const keys = Object.keys(object);
  const key = keys.length > 0 ? pick(random, keys) : 'field';
  switch (Math.floor(random() * 12)) {
    case 0:
      return JSON.stringify({ ...object, [key]: wrongType(object[key], random) });
    case 1: {
      const { [key]: _dropped, ...rest } = object;
      return JSON.stringify(rest);
    }
    case 2:
      return JSON.stringify({ ...object, extra: 'field', [`${key}_x`]: [1, 2] });
    case 3:
      return JSON.stringify({ ...object, [key]: HUGE });
    case 4:
      return `{${keys.map((k) => `${JSON.stringify(k)}:${k === key ? nested(pick(random, [63, 65, 3000])) : JSON.stringify(object[k])}`).join(',') || `"field":${nested(70)}`}}`;
    case 5:
      return JSON.stringify({ ...object, [key]: pick(random, UNICODE) });
    case 6:
      return JSON.stringify({ ...object, [key]: pick(random, NUMBERS) });
    case 7:
      return `{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},${JSON.stringify(object).slice(1)}`.replace(
        /,}$/,
        '}',
      );
    case 8:
      return pick(random, ['[]', '"text"', 'null', '1', '{', '{"a":1,}', '', '{"a":1e400}', '{"a":-1e400}']);
    case 9:
      return JSON.stringify(Object.fromEntries(keys.map((k) => [k, wrongType(object[k], random)])));
    case 10:
      return JSON.stringify({ ...object, [key]: { [pick(random, UNICODE)]: pick(random, UNICODE) } });
    default:
      // The valid skeleton: reaches the call's own checks with the fixtures' UUIDs.
      return JSON.stringify(object);
  }
}

/** The router's answer to a path no route takes. */
const UNKNOWN_ROUTE = '{"status":"fail","message":"unknown route"}';
/**
 * A `..` segment (also as `%2e%2e`): URL parsing removes it with the segment before, so the
 * request reaches another path, usually no route at all (answered as an unknown route even
 * where the operation was a binary download).
 */
const DOT_SEGMENT = /\/(\.\.|%2e%2e)(\/|$|\?)/i;

export interface Fixtures {
  uuid: string;
  uuids: string[];
}

function pathValue(param: Parameter, fixtures: Fixtures, random: () => number): string {
  if (random() < 0.45) return pick(random, BAD_PATH);
  if (param.name === 'uuid' || param.schema.format === 'uuid') return pick(random, fixtures.uuids);
  if (param.name === 'number' || /\\\+/.test(param.schema.pattern ?? '')) return '%2B4930123456';
  if (param.name === 'page') return pick(random, ['1', '0', '99999', '1.5']);
  return pick(random, ['x', 'abc', 'a.b', 'name']);
}

/** One generated request for the operation. */
export function generateRequest(op: Operation, fixtures: Fixtures, random: () => number) {
  let url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const param = op.parameters.find((p) => p.in === 'path' && p.name === name) ?? {
      in: 'path' as const,
      name,
      schema: {},
    };
    return pathValue(param, fixtures, random);
  });
  const query = op.parameters.filter((p) => p.in === 'query' && p.name !== 'sid');
  const parts: string[] = [];
  for (const param of query) {
    if (random() < 0.5) continue;
    const good = String(sample(param.schema, fixtures));
    parts.push(`${param.name}=${random() < 0.6 ? pick(random, BAD_QUERY) : encodeURIComponent(good)}`);
  }
  if (random() < 0.15)
    parts.push(`unknown=${pick(random, BAD_QUERY)}`, `${parts[0]?.split('=')[0] ?? 'x'}=dup`);
  if (parts.length > 0) url += `?${parts.join('&')}`;
  const payload = op.method === 'POST' ? badBody(op, fixtures, random) : undefined;
  return { method: op.method, url, payload };
}

// ---- the database digest ----

/**
 * Tables a failed call may legitimately write: sessions, events, throttles, and the pending
 * sign-up captcha, which any answer to it uses up (signup.repository.ts `takeCaptcha`).
 */
const VOLATILE = /session|event|throttle|login|attempt|signup_captcha/;

/** A digest of every table's rows, by table; compared before and after a failed write. */
export async function digestTables(app: App): Promise<Map<string, string>> {
  const { db } = app.database;
  const names =
    app.database.dialect === 'sqlite'
      ? (
          await sql<{
            name: string;
          }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`.execute(db)
        ).rows.map((row) => row.name)
      : (
          await sql<{
            name: string;
          }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`.execute(
            db,
          )
        ).rows.map((row) => row.name);
  const digests = new Map<string, string>();
  for (const name of names.sort()) {
    if (VOLATILE.test(name) || name.startsWith('kysely_')) continue;
    const { rows } = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(name)}`.execute(db);
    const lines = rows.map((row) =>
      JSON.stringify(row, (_k, v) => (Buffer.isBuffer(v) ? v.toString('hex') : v)),
    );
    digests.set(name, crypto.createHash('sha256').update(lines.sort().join('\n')).digest('hex'));
  }
  return digests;
}

function changedTables(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...new Set([...before.keys(), ...after.keys()])].filter(
    (name) => before.get(name) !== after.get(name),
  );
}

// ---- the run ----

interface Identities {
  owner: Client;
  other: Client;
  none: Client;
  unauth: Client;
}

async function setUp(
  app: App,
): Promise<{ clients: Identities; fixtures: Fixtures; relogin: () => Promise<void> }> {
  const owner = await loggedInClient(app);
  const other = await loggedInClient(app);
  const uuids: string[] = [];
  const tag = await owner.client.call('POST', '/api/tag', { label: 'fuzz' });
  uuids.push(tag.uuid as string);
  for (const [url, body] of [
    ['/api/contact', { firstname: 'Fuzz', lastname: 'Owner' }],
    ['/api/xobject', { xtype: 'fuzz', data: { a: [1, 2] } }],
  ] as const) {
    const made = await owner.client.call('POST', url, body);
    uuids.push(made.uuid as string);
  }
  uuids.push(owner.user.uuid, other.user.uuid);
  const unauth = new Client(app);
  await unauth.open();
  const relogin = async () => {
    for (const { client, user } of [owner, other]) {
      if ((await client.call('GET', '/api/user')).status !== 'ok')
        await client.login(user.username, user.password);
    }
    if ((await unauth.call('GET', '/api/user')).status === 'no-session') await unauth.open();
  };
  return {
    clients: { owner: owner.client, other: other.client, none: new Client(app), unauth },
    fixtures: { uuid: uuids[1]!, uuids },
    relogin,
  };
}

/** Calls that would end the fuzzing identities themselves: only sent without a login. */
function endsIdentity(op: Operation, identity: Identity): boolean {
  return (
    (identity === 'owner' || identity === 'other') && op.method === 'DELETE' && op.path === '/api/session'
  );
}

/**
 * Sends `perOperation` generated requests to every operation (identities in turn), one at a
 * time, and checks each answer. `checkWrites` compares the table digest around every failed
 * POST or DELETE.
 */
export async function fuzz(
  app: App,
  options: { seed: number; perOperation: number; checkWrites?: boolean },
): Promise<FuzzResult> {
  const random = seeded(options.seed);
  const { clients, fixtures, relogin } = await setUp(app);
  const operations = await operationsOf(app);
  const result: FuzzResult = { requests: 0, byStatus: {}, defects: [] };
  const count = (key: string) => {
    result.byStatus[key] = (result.byStatus[key] ?? 0) + 1;
  };
  let digest: Map<string, string> | undefined;
  for (let round = 0; round < options.perOperation; round++) {
    for (const op of operations) {
      const identity = IDENTITIES[(round + operations.indexOf(op)) % IDENTITIES.length]!;
      if (endsIdentity(op, identity)) continue;
      const request = generateRequest(op, fixtures, random);
      const writes = op.method !== 'GET' && options.checkWrites !== false;
      if (writes) digest ??= await digestTables(app);
      const sid = clients[identity].sid;
      const response = await app.server.inject({
        method: request.method,
        url: request.url,
        headers: {
          ...(sid ? { authorization: `Bearer ${sid}` } : {}),
          ...(request.payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(request.payload === undefined ? {} : { payload: request.payload }),
      });
      result.requests += 1;
      const label = `${identity} ${request.method} ${request.url.slice(0, 200)} ${request.payload?.slice(0, 200) ?? ''}`;
      const defect = (problem: string) => result.defects.push({ request: label, problem });
      let status: string | undefined;
      if (response.statusCode >= 500) defect(`HTTP ${response.statusCode}`);
      else if (
        op.binary &&
        response.statusCode === 404 &&
        !(DOT_SEGMENT.test(request.url) && response.body === UNKNOWN_ROUTE)
      ) {
        count('http-404');
        if (response.body !== '') defect('binary 404 with a body');
      } else if (
        op.binary &&
        response.statusCode === 200 &&
        !/json/.test(String(response.headers['content-type']))
      ) {
        count('binary');
      } else if (response.statusCode === 404) {
        // The router's own answer, for a path that lost a segment ('' as a parameter).
        count('unknown-route');
        if (response.body !== UNKNOWN_ROUTE) defect(`HTTP 404 ${response.body.slice(0, 100)}`);
      } else if (response.statusCode !== 200) defect(`HTTP ${response.statusCode}`);
      else {
        try {
          status = (JSON.parse(response.body) as { status?: unknown }).status as string;
        } catch {
          defect('not JSON');
        }
        if (status !== undefined) {
          count(status);
          if (status === 'fail') defect(`fail: ${response.body.slice(0, 200)}`);
          else if (status !== 'ok' && !isApiStatus(status)) defect(`status ${status} outside the union`);
        }
      }
      if (writes) {
        const after = await digestTables(app);
        const changed = changedTables(digest!, after);
        if (status !== 'ok' && changed.length > 0) defect(`failed call changed ${changed.join(', ')}`);
        digest = after;
      }
      if (status === 'ok' && op.method !== 'GET') await relogin();
    }
  }
  return result;
}

/**
 * Every numeric query parameter of every GET (paging's from, to and count among them) at each of
 * NUMERIC_EDGES, alone, as the owner: no answer may be a server failure (PostgreSQL refuses a
 * value past a column's range where SQLite takes it).
 */
export async function fuzzNumericEdges(app: App): Promise<FuzzResult> {
  const { clients, fixtures } = await setUp(app);
  const result: FuzzResult = { requests: 0, byStatus: {}, defects: [] };
  for (const op of await operationsOf(app)) {
    // Long-polls wait for events by design; their bounds are tested with their own areas.
    if (op.method !== 'GET' || op.binary || op.parameters.some((p) => p.name === 'timeout')) continue;
    const base = generateRequest(
      { ...op, parameters: op.parameters.filter((p) => p.in === 'path') },
      fixtures,
      () => 1,
    );
    for (const param of op.parameters) {
      const type = Array.isArray(param.schema?.type) ? param.schema.type[0] : param.schema?.type;
      if (param.in !== 'query' || (type !== 'integer' && type !== 'number')) continue;
      for (const value of NUMERIC_EDGES) {
        const url = `${base.url}?${param.name}=${value}`;
        const response = await app.server.inject({
          method: 'GET',
          url,
          headers: { authorization: `Bearer ${clients.owner.sid}` },
        });
        result.requests += 1;
        const status =
          response.statusCode === 200 ? (JSON.parse(response.body) as { status?: string }).status : undefined;
        const key = String(status ?? `http-${response.statusCode}`);
        result.byStatus[key] = (result.byStatus[key] ?? 0) + 1;
        if (response.statusCode >= 500 || status === 'fail')
          result.defects.push({ request: `GET ${url}`, problem: response.body.slice(0, 200) });
      }
    }
  }
  return result;
}

// ---- the transport: what arrives before a handler could look at it ----

/** A raw answer: the HTTP status, the body, and whether the server closed the connection. */
interface RawAnswer {
  readonly code: number;
  readonly body: string;
  readonly closed: boolean;
}

/** Sends raw bytes (chunks `gapMs` apart; `end` half-closes after them) and reads the answer. */
function rawExchange(
  port: number,
  chunks: readonly Buffer[],
  options: { gapMs?: number; waitMs?: number } = {},
): Promise<RawAnswer | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(parts).toString('latin1');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!match) return resolve(undefined);
      const at = text.indexOf('\r\n\r\n');
      // Closed by the server, or announced so (the client may hang up first once it has the answer).
      const announced = /\r\nconnection: close\r\n/i.test(at < 0 ? text : text.slice(0, at + 2));
      resolve({
        code: Number(match[1]),
        body: at < 0 ? '' : text.slice(at + 4),
        closed: closed || announced,
      });
    };
    const timer = setTimeout(() => {
      socket.destroy();
    }, options.waitMs ?? 10_000);
    socket.on('data', (chunk: Buffer) => parts.push(chunk));
    socket.on('end', () => {
      closed = true;
    });
    socket.on('close', finish);
    socket.on('error', () => {});
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        socket.write(chunk);
        if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
      }
      // One answer is enough: the server may keep the connection open after it.
      const check = setInterval(() => {
        const text = Buffer.concat(parts).toString('latin1');
        const length = /content-length: (\d+)/i.exec(text);
        const at = text.indexOf('\r\n\r\n');
        if (length && at >= 0 && Buffer.byteLength(text.slice(at + 4), 'latin1') >= Number(length[1])) {
          clearInterval(check);
          socket.destroy();
        }
      }, 20);
      socket.on('close', () => clearInterval(check));
    });
  });
}

const ENCODINGS: Record<string, (data: Buffer) => Buffer> = {
  gzip: (data) => zlib.gzipSync(data),
  deflate: (data) => zlib.deflateSync(data),
  br: (data) => zlib.brotliCompressSync(data),
  compress: (data) => data,
  identity: (data) => data,
  zstd: (data) => data,
  'gzip, deflate': (data) => zlib.deflateSync(zlib.gzipSync(data)),
  'x-unknown': (data) => data,
};

/** A gzip bomb: 10 MB of one byte inside a JSON string, about 10 KB compressed. */
const BOMB = zlib.gzipSync(
  Buffer.concat([Buffer.from('{"x":"'), Buffer.alloc(10_000_000, 0x61), Buffer.from('"}')]),
);

/**
 * The fuzz at the transport: every operation, over a real socket, with a raw byte
 * 0xFF and a 100,000-character parameter in the path, a 70 KB query string, a 70 KB header,
 * each Content-Encoding (and a gzip bomb) on its body, a body cut off half way and one sent a
 * byte at a time (on every `slowEvery`-th operation: each waits for the request timeout), and,
 * for writes to an object, eight identical requests at once. Each answer must be HTTP 200 with
 * `ok` or a status of the union (what the parser refuses is wrong-syntax or too-large); `fail`
 * only as "request timeout" on a closed connection; a binary download or an unknown route 404 with the
 * envelope or an empty body; and nothing may wait without end.
 */
export async function fuzzTransport(
  app: App,
  port: number,
  options: { slowEvery: number; requestTimeoutMs: number },
): Promise<FuzzResult> {
  const { clients, fixtures } = await setUp(app);
  const operations = await operationsOf(app);
  const result: FuzzResult = { requests: 0, byStatus: {}, defects: [] };
  const sid = clients.owner.sid!;
  const check = (label: string, op: Operation, answer: RawAnswer | undefined, allowFail: boolean) => {
    result.requests += 1;
    const defect = (problem: string) => result.defects.push({ request: label, problem });
    if (!answer) {
      // Closed without an answer: allowed only where the client never finished its request.
      result.byStatus['closed-unanswered'] = (result.byStatus['closed-unanswered'] ?? 0) + 1;
      if (!allowFail) defect('no answer');
      return;
    }
    if (answer.code >= 500) return defect(`HTTP ${answer.code}`);
    if (answer.code === 404 && (answer.body === '' || answer.body.includes('unknown route'))) {
      result.byStatus['http-404'] = (result.byStatus['http-404'] ?? 0) + 1;
      return;
    }
    if (answer.code !== 200) return defect(`HTTP ${answer.code}`);
    let status: string | undefined;
    let message: string | undefined;
    try {
      ({ status, message } = JSON.parse(answer.body) as { status?: string; message?: string });
    } catch {
      if (op.binary) {
        result.byStatus.binary = (result.byStatus.binary ?? 0) + 1;
        return;
      }
      return defect(`not JSON: ${answer.body.slice(0, 80)}`);
    }
    const key = status === 'fail' ? `fail (${message})` : String(status);
    result.byStatus[key] = (result.byStatus[key] ?? 0) + 1;
    if (status === 'fail') {
      if (!(allowFail && /^request timeout$/.test(message ?? '')))
        defect(`fail: ${answer.body.slice(0, 120)}`);
    } else if (status !== 'ok' && !isApiStatus(String(status))) defect(`status ${status} outside the union`);
  };
  const head = (method: string, url: string, extra: string[] = []) =>
    Buffer.from(
      [`${method} ${url} HTTP/1.1`, 'Host: fuzz', `authorization: Bearer ${sid}`, ...extra, '', ''].join(
        '\r\n',
      ),
      'latin1',
    );
  const random = seeded(1818);
  let index = 0;
  for (const op of operations) {
    index += 1;
    const base = generateRequest(op, fixtures, random).url.split('?')[0]!;
    const withParam = (value: string) =>
      op.path.includes('{')
        ? op.path.replace(/\{[^}]+\}/, value).replace(/\{[^}]+\}/g, 'x')
        : `${op.path}/${value}`;
    const label = (what: string) => `${what} ${op.method} ${op.path}`;
    // Raw byte 0xFF in the path; a path parameter of 100,000 characters.
    check(
      label('raw byte'),
      op,
      await rawExchange(port, [
        Buffer.concat([
          Buffer.from(`${op.method} ${withParam('a')}`),
          Buffer.from([0xff]),
          head('', '').subarray(1),
        ]),
      ]),
      true,
    );
    check(
      label('long parameter'),
      op,
      await rawExchange(port, [head(op.method, withParam('a'.repeat(100_000)))]),
      true,
    );
    // A 70 KB query string and a 70 KB header.
    check(
      label('huge query'),
      op,
      await rawExchange(port, [head(op.method, `${base}?q=${'b'.repeat(70_000)}`)]),
      true,
    );
    check(
      label('huge header'),
      op,
      await rawExchange(port, [head(op.method, base, [`x-fuzz: ${'c'.repeat(70_000)}`])]),
      true,
    );
    if (op.method === 'POST') {
      const body = Buffer.from(JSON.stringify(sample(op.body, fixtures) ?? {}));
      for (const [encoding, encode] of Object.entries(ENCODINGS)) {
        const data = encode(body);
        check(
          label(`content-encoding ${encoding}`),
          op,
          await rawExchange(port, [
            head('POST', base, [
              'content-type: application/json',
              `content-encoding: ${encoding}`,
              `content-length: ${data.length}`,
            ]),
            data,
          ]),
          false,
        );
      }
      check(
        label('gzip bomb'),
        op,
        await rawExchange(port, [
          head('POST', base, [
            'content-type: application/json',
            'content-encoding: gzip',
            `content-length: ${BOMB.length}`,
          ]),
          BOMB,
        ]),
        false,
      );
      if (index % options.slowEvery === 0) {
        const cut = [
          head('POST', base, ['content-type: application/json', `content-length: ${body.length + 10}`]),
          body,
        ];
        // A byte a second, for longer than twice the request timeout: a short body (`{}`) padded
        // with JSON's leading whitespace, or it would arrive whole before the timeout.
        const padded = Buffer.concat([
          Buffer.from(
            ' '.repeat(Math.max(0, Math.ceil((options.requestTimeoutMs * 2) / 1000) + 1 - body.length)),
          ),
          body,
        ]);
        const slow = [
          head('POST', base, ['content-type: application/json', `content-length: ${padded.length}`]),
          ...[...padded].map((byte) => Buffer.from([byte])),
        ];
        const wait = options.requestTimeoutMs * 3;
        const [truncated, trickled] = await Promise.all([
          rawExchange(port, cut, { waitMs: wait }),
          rawExchange(port, slow, { gapMs: 1000, waitMs: wait }),
        ]);
        // Answered "request timeout" (or closed) by the server, before the client gave up.
        for (const [what, answer] of [
          ['truncated body', truncated],
          ['slow body', trickled],
        ] as const) {
          check(label(what), op, answer, true);
          if (answer && !answer.closed)
            result.defects.push({ request: label(what), problem: 'connection kept' });
        }
      }
    }
  }
  // Parallel writes to one object, last (deletions take the fixtures away).
  for (const op of operations) {
    const label = (what: string) => `${what} ${op.method} ${op.path}`;
    if (op.method !== 'GET' && op.path.includes('{uuid}') && !/session/.test(op.path)) {
      const url = op.path.replace('{uuid}', fixtures.uuid).replace(/\{[^}]+\}/g, fixtures.uuids[0]!);
      const payload = op.method === 'POST' ? JSON.stringify(sample(op.body, fixtures) ?? {}) : undefined;
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          app.server.inject({
            method: op.method,
            url,
            headers: {
              authorization: `Bearer ${sid}`,
              ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(payload === undefined ? {} : { payload }),
          }),
        ),
      );
      for (const answer of answers)
        check(label('parallel'), op, { code: answer.statusCode, body: answer.body, closed: false }, false);
    }
  }
  return result;
}
