/**
 * Reference servers the Zentrale figures are compared with, each in its own process; the kind
 * comes from BENCH_SERVER:
 * - `node-http`: bare node:http answering `{"status":"ok"}` to every request;
 * - `node-http-hold`: bare node:http holding every request until the parent sends `release`
 *   (the memory and delivery yardstick for long-polls);
 * - `node-http-json`: bare node:http doing the JSON work of the contact routes in memory: GET
 *   /contact/<id> answers the stored contact, POST /contact parses the body, stores a contact
 *   under a new UUID and answers it (the yardstick of `bench objects`);
 * - `node-http-sqlite`, `node-http-postgres`: bare node:http doing that JSON work with the contact
 *   kept in a database instead of the Map: GET runs one prepared SELECT by key, POST one INSERT in
 *   its own transaction (SQLite with Zentrale's journal settings, WAL and synchronous NORMAL;
 *   PostgreSQL at BENCH_POSTGRES_URL through a pg Pool). The floor of any server that stores the
 *   write: what the database costs a request before any rule of the platform's runs;
 * - `fastify-json`: plain Fastify routes doing the JSON work of `node-http-json` in memory (no
 *   plugins, no hooks; response schemas as Zentrale's): the framework's floor for the same routes;
 * - `fastify`: a plain Fastify route answering `{"status":"ok"}` (no plugins, no hooks);
 * - `fastify-sqlite`: a plain Fastify route that reads the Bearer session from SQLite on every
 *   request (what a database-backed session check costs, for comparison with Zentrale's
 *   in-memory sessions).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import { announceReady, serveCommands } from './child.js';
import { heapAfterGc } from './memory.js';

const kind = process.env.BENCH_SERVER ?? 'node-http';
const OK = JSON.stringify({ status: 'ok' });
const HEADERS = { 'content-type': 'application/json; charset=utf-8' };
const CONTACT_TABLE =
  'CREATE TABLE bench_contact (uuid TEXT PRIMARY KEY, owner TEXT NOT NULL, time BIGINT NOT NULL, ' +
  'firstname TEXT NOT NULL, lastname TEXT NOT NULL)';

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const handlers: Parameters<typeof serveCommands>[0] = {
  memory: async () => ({ ...(await heapAfterGc()) }),
};
let stop: () => Promise<void>;
let port: number;
let ready: Record<string, unknown> = {};

if (kind === 'node-http' || kind === 'node-http-hold') {
  let lastWritten = 0;
  const held = new Set<http.ServerResponse>();
  const server = http.createServer((_request, response) => {
    if (kind === 'node-http') {
      response.writeHead(200, { ...HEADERS, 'content-length': Buffer.byteLength(OK) });
      response.end(OK);
      return;
    }
    held.add(response);
    // 'prefinish' fires inside end(), once the answer is written to the socket; 'finish'
    // waits for the write callback, which queues behind thousands of others.
    response.once('prefinish', () => {
      lastWritten = performance.timeOrigin + performance.now();
    });
    response.once('close', () => held.delete(response));
  });
  handlers.pending = () => ({ pending: held.size, lastWritten });
  handlers.release = () => {
    const start = performance.timeOrigin + performance.now();
    const time = Math.floor(Date.now() / 1000);
    for (const response of held) {
      const body = JSON.stringify({ status: 'ok', event: [{ id: 0, event: 'bench_event', time }] });
      response.writeHead(200, { ...HEADERS, 'content-length': Buffer.byteLength(body) });
      response.end(body);
    }
    return { start, returned: performance.timeOrigin + performance.now() };
  };
  port = await listen(server);
  stop = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
} else if (kind === 'node-http-json' || kind === 'node-http-sqlite' || kind === 'node-http-postgres') {
  const store =
    kind === 'node-http-json'
      ? memoryContacts()
      : kind === 'node-http-sqlite'
        ? sqliteContacts()
        : await postgresContacts();
  const send = (response: http.ServerResponse, body: string) => {
    response.writeHead(200, { ...HEADERS, 'content-length': Buffer.byteLength(body) });
    response.end(body);
  };
  const fail = (response: http.ServerResponse) => () => response.writeHead(500).end();
  const first = randomUUID();
  await store.insert(first, randomUUID(), 0, 'Ada', 'Lovelace');
  const server = http.createServer((request, response) => {
    if (request.method === 'GET') {
      settle(
        store.find(request.url?.slice('/contact/'.length) ?? ''),
        (contact) =>
          send(response, JSON.stringify(contact ? { status: 'ok', contact } : { status: 'wrong-contact' })),
        fail(response),
      );
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        firstname: string;
        lastname: string;
      };
      const uuid = randomUUID();
      settle(
        store.insert(uuid, 'bench', Date.now(), body.firstname, body.lastname),
        () => send(response, JSON.stringify({ status: 'ok', uuid })),
        fail(response),
      );
    });
  });
  ready = { contact: first };
  port = await listen(server);
  stop = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await store.close();
  };
} else if (kind === 'fastify-json') {
  const app = Fastify({ logger: false });
  const contacts = memoryContacts();
  const first = randomUUID();
  contacts.insert(first, randomUUID(), 0, 'Ada', 'Lovelace');
  const contact = {
    type: 'object',
    properties: {
      owner: { type: 'string' },
      time: { type: 'number' },
      firstname: { type: 'string' },
      lastname: { type: 'string' },
      tag: { type: 'array', items: { type: 'string' } },
      entry: { type: 'object', additionalProperties: true },
    },
  };
  const status = { status: { type: 'string' } };
  app.get<{ Params: { uuid: string } }>(
    '/contact/:uuid',
    { schema: { response: { 200: { type: 'object', properties: { ...status, contact } } } } },
    async (request) => {
      const found = contacts.find(request.params.uuid);
      return found ? { status: 'ok', contact: found } : { status: 'wrong-contact' };
    },
  );
  app.post<{ Body: { firstname: string; lastname: string } }>(
    '/contact',
    {
      schema: {
        body: {
          type: 'object',
          properties: { firstname: { type: 'string' }, lastname: { type: 'string' } },
          required: ['firstname', 'lastname'],
        },
        response: { 200: { type: 'object', properties: { ...status, uuid: { type: 'string' } } } },
      },
    },
    async (request) => {
      const uuid = randomUUID();
      contacts.insert(uuid, 'bench', Date.now(), request.body.firstname, request.body.lastname);
      return { status: 'ok', uuid };
    },
  );
  ready = { contact: first };
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  stop = () => app.close();
} else if (kind === 'fastify' || kind === 'fastify-sqlite') {
  const app = Fastify({ logger: false });
  const response = {
    200: {
      type: 'object',
      properties: { status: { type: 'string' }, kind: { type: 'string' } },
      required: ['status'],
    },
  };
  if (kind === 'fastify') {
    app.get('/', { schema: { response } }, async () => ({ status: 'ok' }));
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-ref-'));
    const database = new SQLite(path.join(dir, 'sessions.sqlite'));
    database.pragma('journal_mode = WAL');
    database.exec('CREATE TABLE session (sid TEXT PRIMARY KEY, kind TEXT NOT NULL, user_uuid TEXT)');
    const sid = 'reference-session-id-0123456789abcdef';
    database.prepare('INSERT INTO session VALUES (?, ?, ?)').run(sid, 'user', 'user-uuid');
    const find = database.prepare<[string], { kind: string }>(
      'SELECT kind, user_uuid FROM session WHERE sid = ?',
    );
    app.get('/', { schema: { response } }, async (request) => {
      const header = request.headers.authorization;
      const row = header?.startsWith('Bearer ') ? find.get(header.slice(7)) : undefined;
      return row ? { status: 'ok', kind: row.kind } : { status: 'no-session' };
    });
    ready = { sid };
    app.addHook('onClose', async () => {
      database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  stop = () => app.close();
} else {
  throw new Error(`unknown BENCH_SERVER ${kind}`);
}

/** Where a bare server keeps its contacts; the memory and SQLite stores answer at once, without a promise. */
interface ContactStore {
  find(uuid: string): Contact | undefined | Promise<Contact | undefined>;
  insert(
    uuid: string,
    owner: string,
    time: number,
    firstname: string,
    lastname: string,
  ): void | Promise<void>;
  close(): void | Promise<void>;
}

type Contact = Record<string, unknown>;

/** Goes on with a value at once, or when its promise settles: no microtask where none is needed. */
function settle<T>(value: T | Promise<T>, done: (value: T) => void, failed: () => void): void {
  if (value instanceof Promise) value.then(done, failed);
  else done(value);
}

/** The Map of `node-http-json` and `fastify-json`: a ContactStore whose answers are never promises. */
interface MemoryContacts extends ContactStore {
  find(uuid: string): Contact | undefined;
  insert(uuid: string, owner: string, time: number, firstname: string, lastname: string): void;
}

function memoryContacts(): MemoryContacts {
  const contacts = new Map<string, Contact>();
  return {
    find: (uuid) => contacts.get(uuid),
    insert: (uuid, owner, time, firstname, lastname) => {
      // Bounded like the benchmark's user: the map does not grow through the run.
      if (contacts.size > 100_000) contacts.clear();
      contacts.set(uuid, { owner, time, firstname, lastname, tag: [], entry: {} });
    },
    close: () => {},
  };
}

function sqliteContacts(): ContactStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-ref-'));
  const database = new SQLite(path.join(dir, 'contacts.sqlite'));
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.exec(CONTACT_TABLE);
  const find = database.prepare<[string], Contact>(
    'SELECT owner, time, firstname, lastname FROM bench_contact WHERE uuid = ?',
  );
  const insert = database.prepare('INSERT INTO bench_contact VALUES (?, ?, ?, ?, ?)');
  return {
    find: (uuid) => find.get(uuid),
    insert: (...values) => {
      insert.run(...values);
    },
    close: () => {
      database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresContacts(): Promise<ContactStore> {
  const url = process.env.BENCH_POSTGRES_URL;
  if (!url) throw new Error('node-http-postgres needs BENCH_POSTGRES_URL');
  // Zentrale's own pool size, so that both keep as many backends busy.
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query('DROP TABLE IF EXISTS bench_contact');
  await pool.query(CONTACT_TABLE);
  const find = 'SELECT owner, time, firstname, lastname FROM bench_contact WHERE uuid = $1';
  const insert = 'INSERT INTO bench_contact VALUES ($1, $2, $3, $4, $5)';
  return {
    find: async (uuid) => (await pool.query({ name: 'find', text: find, values: [uuid] })).rows[0],
    insert: async (...values) => {
      await pool.query({ name: 'insert', text: insert, values });
    },
    close: async () => {
      await pool.query('DROP TABLE IF EXISTS bench_contact');
      await pool.end();
    },
  };
}

serveCommands(handlers, () => stop());
announceReady({ port, ...ready });
