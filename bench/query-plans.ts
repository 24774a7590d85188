/**
 * `npx tsx bench/query-plans.ts` (docs/query-plans.md): the object path's statements and
 * their plans, on SQLite and on an embedded PostgreSQL (scripts/embedded-postgres.mjs).
 * The real app (buildApp, in this process) on a filled store: one user with `--objects`
 * contacts, another user with as many. Each hot request is sent once (inject) while every
 * statement is recorded (src/db/dialect/observe.ts); the statements are counted and each
 * distinct one is explained: EXPLAIN QUERY PLAN on SQLite, EXPLAIN on PostgreSQL (after
 * ANALYZE, as autovacuum would have). Then the event fan-out of one write: an update of a
 * contact shared with a second user, with 1, 10 and 100 sessions of each user, counting the
 * statements and the event rows it adds.
 *
 *   npx tsx bench/query-plans.ts [--objects 10000] [--sessions 1,10,100] [--only sqlite|postgres]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type CompiledQuery, sql } from 'kysely';
import { startEmbeddedPostgres } from '../scripts/embedded-postgres.mjs';
import { type App, buildApp } from '../src/app.js';
import { observeQueries } from '../src/db/dialect/observe.js';
import { loadConfig } from '../src/platform/config.js';
import { fillContacts } from './fill-contacts.js';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '10000' },
    sessions: { type: 'string', default: '1,10,100' },
    only: { type: 'string' },
  },
});
const OBJECTS = Number(values.objects);
const SESSIONS = values.sessions.split(',').map(Number);

type Dialect = 'sqlite' | 'postgres';

/** The rule engine's and ipquality's timers, which poll on their own clocks whatever the requests do. */
const BACKGROUND = /from "rule"|from "rule_action"|from "ipquality"/;

/** Statements that have no plan (transaction control, SQLite settings). */
const NO_PLAN = /^\s*(begin|commit|rollback|savepoint|release|pragma)\b/i;

async function inject(app: App, method: 'GET' | 'POST', url: string, sid?: string, body?: object) {
  const response = await app.server.inject({
    method,
    url,
    headers: sid ? { authorization: `Bearer ${sid}` } : {},
    ...(body ? { payload: body } : {}),
  });
  return response.json() as Record<string, unknown>;
}

async function login(app: App, username: string, password: string): Promise<string> {
  const sid = (await inject(app, 'GET', '/api/session')).sid as string;
  const answer = await inject(app, 'POST', '/api/session', sid, { username, password });
  if (answer.status !== 'ok') throw new Error(`login: ${JSON.stringify(answer)}`);
  return sid;
}

/** Waits until the event store wrote what the request emitted (its batch runs after a turn). */
async function settle(app: App): Promise<void> {
  const db = app.services.store.db;
  let last = -1;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 30));
    const row = await sql<{ n: number | string }>`select count(*) as n from session_event`.execute(db);
    const n = Number(row.rows[0]?.n);
    if (n === last) return;
    last = n;
  }
}

/** The statements one action runs, the event store's batch after it included. */
async function recorded(app: App, action: () => Promise<unknown>): Promise<CompiledQuery[]> {
  await settle(app);
  const queries: CompiledQuery[] = [];
  const stop = observeQueries((query) => queries.push(query));
  try {
    await action();
    await settle(app);
  } finally {
    stop();
  }
  // settle's own counts are not the action's, nor the rule engine's timer.
  return queries.filter(
    (query) => !/count\(\*\) as n from session_event/.test(query.sql) && !BACKGROUND.test(query.sql),
  );
}

async function explain(app: App, dialect: Dialect, query: CompiledQuery): Promise<string> {
  const db = app.services.store.db;
  const prefix = dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN ' : 'EXPLAIN ';
  const result = await db.executeQuery<Record<string, unknown>>({
    ...query,
    sql: prefix + query.sql,
  } as CompiledQuery<Record<string, unknown>>);
  if (dialect === 'postgres') return result.rows.map((row) => String(row['QUERY PLAN'])).join('\n');
  return result.rows.map((row) => `${'  '.repeat(Number(row.parent) === 0 ? 0 : 1)}${row.detail}`).join('\n');
}

function printStatements(title: string, queries: CompiledQuery[], plans: Map<string, string>): void {
  console.log(`\n#### ${title}: ${queries.length} statements\n`);
  console.log('```');
  for (const query of queries) {
    console.log(query.sql.replace(/\s+/g, ' '));
    const plan = plans.get(query.sql);
    if (plan) console.log(plan.replace(/^/gm, '    → '));
  }
  console.log('```');
}

async function runDialect(dialect: Dialect, postgres?: { url: string }): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-plans-'));
  const env: Record<string, string> = {
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://127.0.0.1:8080',
    SESSION_RATE_LIMIT: '0',
    TELEPHONY: 'off',
    ...(postgres ? { DATABASE_URL: postgres.url } : {}),
  };
  const app = await buildApp(loadConfig(env));
  try {
    const { users, store, tags } = app.services;
    const password = 'plans-password';
    const a = await users.createUser({
      username: 'plana',
      password,
      firstname: 'A',
      lastname: 'A',
      email: 'a@example.com',
    });
    const b = await users.createUser({
      username: 'planb',
      password,
      firstname: 'B',
      lastname: 'B',
      email: 'b@example.com',
    });
    await store.write((w) => store.linkUsers(w, a.uuid, b.uuid));
    console.error(`${dialect}: filling ${OBJECTS} contacts for each of two users`);
    await fillContacts(app, a.uuid, OBJECTS);
    await fillContacts(app, b.uuid, OBJECTS);
    if (dialect === 'postgres') await sql`analyze`.execute(store.db);

    const sidA = await login(app, 'plana', password);
    const sidB = await login(app, 'planb', password);
    const created = await inject(app, 'POST', '/api/contact', sidA, {
      firstname: 'Grace',
      lastname: 'Hopper',
    });
    const contact = created.uuid as string;
    const shared = (await inject(app, 'POST', '/api/tag', sidA, { label: 'shared', policy: { [b.uuid]: 1 } }))
      .uuid as string;
    const tagged = await inject(app, 'POST', `/api/object/${contact}/tag`, sidA, { add: [shared] });
    if (tagged.status !== 'ok') throw new Error(`tag: ${JSON.stringify(tagged)}`);
    const tagAll = (await tags.getUserTags(a.uuid)).tag_all;

    const requests: [string, () => Promise<unknown>][] = [
      ['GET /api/session (session lookup)', () => inject(app, 'GET', '/api/session', sidA)],
      ['GET /api/contact/{uuid} (owner)', () => inject(app, 'GET', `/api/contact/${contact}`, sidA)],
      [
        'GET /api/contact/{uuid} (shared with the reader)',
        () => inject(app, 'GET', `/api/contact/${contact}`, sidB),
      ],
      [
        'GET /api/tag/{uuid}/object (tag_all, newest page)',
        () => inject(app, 'GET', `/api/tag/${tagAll}/object?type=contact`, sidA),
      ],
      [
        'GET /api/tag/{uuid}/object (a tag shared with the reader)',
        () => inject(app, 'GET', `/api/tag/${shared}/object`, sidB),
      ],
      [
        'POST /api/contact (create)',
        () => inject(app, 'POST', '/api/contact', sidA, { firstname: 'Ada', lastname: 'Lovelace' }),
      ],
      [
        'POST /api/contact/{uuid} (update, shared)',
        () =>
          inject(app, 'POST', `/api/contact/${contact}`, sidA, { firstname: 'Grace', lastname: 'Brewster' }),
      ],
      ['GET /api/event (an event waiting)', () => inject(app, 'GET', '/api/event?timeout=0', sidB)],
    ];
    console.log(`\n### ${dialect}, ${OBJECTS} contacts for each of two users\n`);
    for (const [title, action] of requests) {
      const queries = await recorded(app, action);
      const plans = new Map<string, string>();
      for (const query of queries)
        if (!NO_PLAN.test(query.sql) && !plans.has(query.sql))
          plans.set(query.sql, await explain(app, dialect, query));
      printStatements(title, queries, plans);
    }

    // Fan-out: sessions of the owner and of the user the contact is shared with.
    console.log(`\n#### ${dialect}: fan-out of one update of the shared contact\n`);
    console.log('| sessions of each user | statements | session_event rows | event_body rows |');
    console.log('|---|---|---|---|');
    let held = 1;
    for (const count of SESSIONS) {
      for (; held < count; held += 1) {
        await login(app, 'plana', password);
        await login(app, 'planb', password);
      }
      const rows = async () => {
        const r = await sql<{ e: number | string; b: number | string }>`
          select (select count(*) from session_event) as e, (select count(*) from event_body) as b`.execute(
          store.db,
        );
        return { e: Number(r.rows[0]?.e), b: Number(r.rows[0]?.b) };
      };
      await settle(app);
      const before = await rows();
      const queries = await recorded(app, () =>
        inject(app, 'POST', `/api/contact/${contact}`, sidA, { firstname: 'Grace', lastname: `N${count}` }),
      );
      const after = await rows();
      console.log(`| ${count} | ${queries.length} | ${after.e - before.e} | ${after.b - before.b} |`);
    }
  } finally {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const dialects: Dialect[] = values.only ? [values.only as Dialect] : ['sqlite', 'postgres'];
// Started before any node: a node narrows the process's umask, and initdb, running as another
// user, could not read the password file written after that.
const postgres = dialects.includes('postgres') ? await startEmbeddedPostgres() : undefined;
try {
  for (const dialect of dialects) await runDialect(dialect, dialect === 'postgres' ? postgres : undefined);
} finally {
  await postgres?.stop();
}
process.exit(0);
