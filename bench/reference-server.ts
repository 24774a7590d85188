/**
 * Reference servers the Zentrale figures are compared with, each in its own process; the kind
 * comes from BENCH_SERVER:
 * - `node-http`: bare node:http answering `{"status":"ok"}` to every request;
 * - `node-http-hold`: bare node:http holding every request until the parent sends `release`
 *   (the memory and delivery yardstick for long-polls);
 * - `node-http-json`: bare node:http doing the JSON work of the contact routes in memory: GET
 *   /contact/<id> answers the stored contact, POST /contact parses the body, stores a contact
 *   under a new UUID and answers it (the yardstick of `bench objects`);
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
import { announceReady, serveCommands } from './child.js';
import { heapAfterGc } from './memory.js';

const kind = process.env.BENCH_SERVER ?? 'node-http';
const OK = JSON.stringify({ status: 'ok' });
const HEADERS = { 'content-type': 'application/json; charset=utf-8' };

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
} else if (kind === 'node-http-json') {
  const contacts = new Map<string, Record<string, unknown>>();
  const send = (response: http.ServerResponse, body: string) => {
    response.writeHead(200, { ...HEADERS, 'content-length': Buffer.byteLength(body) });
    response.end(body);
  };
  const first = randomUUID();
  contacts.set(first, {
    owner: randomUUID(),
    time: 0,
    firstname: 'Ada',
    lastname: 'Lovelace',
    tag: [],
    entry: {},
  });
  const server = http.createServer((request, response) => {
    if (request.method === 'GET') {
      const contact = contacts.get(request.url?.slice('/contact/'.length) ?? '');
      send(response, JSON.stringify(contact ? { status: 'ok', contact } : { status: 'wrong-contact' }));
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
      // Bounded like the benchmark's user: the map does not grow through the run.
      if (contacts.size > 100_000) contacts.clear();
      contacts.set(uuid, {
        owner: 'bench',
        time: Date.now(),
        firstname: body.firstname,
        lastname: body.lastname,
      });
      send(response, JSON.stringify({ status: 'ok', uuid }));
    });
  });
  ready = { contact: first };
  port = await listen(server);
  stop = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
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

serveCommands(handlers, () => stop());
announceReady({ port, ...ready });
