/**
 * Test helpers: `build()` starts the app on a fresh SQLite file or a fresh PostgreSQL database
 * and closes it after the test; `DIALECTS` lets storage tests run against both; factories make
 * users and partners; `Client` talks to the app through `inject` the way a client would.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { type App, buildApp } from '../src/app.js';
import type { Clock } from '../src/platform/clock.js';
import { type Config, loadConfig } from '../src/platform/config.js';
import { randomToken } from '../src/platform/ids.js';

export type Dialect = 'sqlite' | 'postgres';
export const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres'];

/** A fresh, empty PostgreSQL database on the server `npm test` started. */
export async function createPostgresDatabase(): Promise<string> {
  const admin = process.env.ZENTRALE_TEST_POSTGRES;
  if (!admin) throw new Error('ZENTRALE_TEST_POSTGRES is unset: run the tests with `npm test`');
  const name = `zt_${randomToken(9)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

export function tempDir(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-test-'));
  // Registered before the node that uses the directory, so this hook can run while its engines
  // still write there (a new file mid-removal is ENOTEMPTY): retried, and never thrown, since a
  // throwing hook skips the hooks after it (the node's close), and the file then never ends.
  t.after(() => {
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch (error) {
      t.diagnostic(`temporary directory ${dir} left: ${(error as Error).message}`);
    }
  });
  return dir;
}

/** Environment for a test node: its own DATA_DIR and, for postgres, its own database. */
export async function testEnv(t: TestContext, dialect: Dialect = 'sqlite', env: Record<string, string> = {}) {
  const base: Record<string, string> = {
    DATA_DIR: tempDir(t),
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://127.0.0.1:8080',
    SESSION_RATE_LIMIT: '0',
    // Telephony tests turn the engines on with their own free ports.
    TELEPHONY: 'off',
  };
  if (dialect === 'postgres') base.DATABASE_URL = await createPostgresDatabase();
  return { ...base, ...env };
}

/** Builds the app on a fresh database; it is closed after the test. */
export async function build(
  t: TestContext,
  options: { dialect?: Dialect; env?: Record<string, string>; clock?: Clock } = {},
): Promise<App> {
  const config: Config = loadConfig(await testEnv(t, options.dialect, options.env));
  const app = await buildApp(config, undefined, options.clock);
  t.after(() => app.close());
  return app;
}

export interface Answer {
  status: string;
  message?: string;
  [field: string]: unknown;
}

/** A client of one session, as an app or device would be. */
export class Client {
  sid: string | undefined;
  constructor(
    readonly app: App,
    readonly headers: Record<string, string> = {},
  ) {}

  async call(method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<Answer> {
    const response = await this.app.server.inject({
      method,
      url,
      headers: { ...this.headers, ...(this.sid ? { authorization: `Bearer ${this.sid}` } : {}) },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode} for ${method} ${url}`);
    return response.json() as Answer;
  }

  /** GET /api/session: a new session for this client. */
  async open(language?: string): Promise<Answer> {
    this.sid = undefined;
    const answer = await this.call('GET', `/api/session${language ? `?language=${language}` : ''}`);
    this.sid = answer.sid as string;
    return answer;
  }

  /** A new session logged in as the user. */
  async login(username: string, password: string): Promise<Answer> {
    await this.open();
    const answer = await this.call('POST', '/api/session', { username, password });
    if (answer.status !== 'ok') throw new Error(`login failed: ${answer.status}`);
    return answer;
  }
}

/** The Authorization header of a client's session. */
export function bearer(client: Client): Record<string, string> {
  return { authorization: `Bearer ${client.sid}` };
}

/** POST of a raw body (an upload) with the client's session; answers the JSON envelope. */
export async function upload(
  client: Client,
  url: string,
  body: Uint8Array,
  contentType = 'application/octet-stream',
) {
  const response = await client.app.server.inject({
    method: 'POST',
    url,
    headers: { ...bearer(client), 'content-type': contentType },
    payload: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
  });
  if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode} for POST ${url}`);
  return response.json() as { status: string; message?: string };
}

/** A binary GET, with whatever headers (session or none, Range) the test gives. */
export function download(app: App, url: string, headers: Record<string, string> = {}) {
  return app.server.inject({ method: 'GET', url, headers });
}

let counter = 0;

/** A user made through the service, with a known password. */
export async function buildUser(
  app: App,
  overrides: Partial<Parameters<App['services']['users']['createUser']>[0]> = {},
) {
  counter += 1;
  const input = {
    username: `user${process.pid}x${counter}`,
    password: 'secret-pw',
    firstname: 'Ada',
    lastname: 'Lovelace',
    email: `user${process.pid}x${counter}@example.com`,
    ...overrides,
  };
  const user = await app.services.users.createUser(input);
  return { ...user, password: input.password };
}

export async function buildPartner(app: App, name = `partner${counter++}`, key = 'partner-key') {
  const partner = await app.services.partners.createPartner(name, key, ['phone']);
  return { ...partner, key };
}

/** A client logged in as a fresh user. */
export async function loggedInClient(app: App, overrides: Parameters<typeof buildUser>[1] = {}) {
  const user = await buildUser(app, overrides);
  const client = new Client(app);
  await client.login(user.username, user.password);
  return { client, user };
}

let secretDir: string | undefined;
let secretCount = 0;

/** A file holding a secret, as the operator hands one to the CLI (removed when the process exits). */
export function secretFile(value: string): string {
  if (!secretDir) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-secrets-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    secretDir = dir;
  }
  secretCount += 1;
  const file = path.join(secretDir, `secret-${secretCount}`);
  fs.writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return file;
}

/**
 * Resolves once `check` holds, looking again every few milliseconds; throws `what` after
 * `timeoutMs`. For a state another part reaches on its own time (a file removed after a commit,
 * a long-poll being held), where a fixed sleep would be too short on a busy machine or waste time.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 5,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Like `until`, for a value read afresh each time: resolves with the first one `check` accepts. */
export async function eventually<T>(
  read: () => T | Promise<T>,
  check: (value: T) => boolean,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 5,
): Promise<T> {
  let value!: T;
  await until(
    async () => {
      value = await read();
      return check(value);
    },
    what,
    timeoutMs,
    intervalMs,
  );
  return value;
}

/** A long-poll of the client's session, once the node holds it (wrapped: not awaited here). */
export async function heldLongPoll(client: Client, timeout = 60) {
  const queue = client.app.services.sessions.findBySid(client.sid!)!.queue;
  const before = queue.waiting;
  const answer = client.call('GET', `/api/event?timeout=${timeout}`);
  await until(() => queue.waiting > before, 'the long-poll is held');
  // Wrapped: an async function returning the promise itself would wait for the answer.
  return { answer };
}
