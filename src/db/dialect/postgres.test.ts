/**
 * The PostgreSQL dialect's connections: a parametrised statement is parsed once per connection
 * (a named prepared statement), statements without parameters are not kept.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createPostgresDatabase, until } from '../../../test/helper.js';
import type { Db } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';
import { Writer } from '../../platform/database/unit-of-work.js';
import { COMMIT_BEHIND } from './handle.js';
import { observeRoundTrips } from './observe.js';
import { openPostgres } from './postgres.js';

test('postgres: a parametrised statement run twice is prepared once on its connection', async (t) => {
  const handle = openPostgres<Record<string, never>>(await createPostgresDatabase());
  t.after(() => handle.close());
  // One connection, whose prepared statements pg_prepared_statements lists.
  const prepared = await handle.db.connection().execute(async (trx) => {
    for (const n of [1, 2]) {
      const row = (await sql<{ n: number }>`select ${n}::int + 1 as n`.execute(trx)).rows[0];
      assert.equal(row?.n, n + 1);
    }
    await sql`select 1`.execute(trx);
    return (
      await sql<{
        statement: string;
      }>`select statement from pg_prepared_statements where statement not like ${'%pg_prepared_statements%'}`.execute(
        trx,
      )
    ).rows.map((row) => row.statement);
  });
  assert.deepEqual(prepared, ['select $1::int + 1 as n']);
});

test("postgres: a transaction's BEGIN rides on its first statement's round trip", async (t) => {
  const handle = openPostgres<Record<string, never>>(await createPostgresDatabase());
  t.after(() => handle.close());
  await sql`create table pipelined (n int primary key)`.execute(handle.db);
  const trips: string[] = [];
  const stop = observeRoundTrips((text) => trips.push(text));
  t.after(stop);
  // Transactions as every write opens them: through the unit of work.
  const writer = new Writer(handle.db as unknown as Db, { emit: () => {} }, { error: () => {} });
  const sum = await writer.write(async ({ trx }) => {
    await sql`insert into pipelined values (${1}::int)`.execute(trx);
    return (await sql<{ n: number }>`select sum(n)::int as n from pipelined`.execute(trx)).rows[0]?.n;
  });
  assert.equal(sum, 1);
  // BEGIN and the insert in one round trip; the select; COMMIT.
  assert.deepEqual(trips, ['begin', 'select sum(n)::int as n from pipelined', 'commit']);
  // A first statement that fails fails the transaction with its own error, and nothing is kept.
  await assert.rejects(
    writer.write(async ({ trx }) => {
      await sql`insert into pipelined values (${2}::int), (${1}::int)`.execute(trx);
    }),
    /duplicate key/,
  );
  // A transaction that fails before its first statement rolls back (the ROLLBACK rides with BEGIN).
  await assert.rejects(
    writer.write(async () => {
      throw new Error('before any statement');
    }),
    /before any statement/,
  );
  const rows = (await sql<{ n: number }>`select n from pipelined order by n`.execute(handle.db)).rows;
  assert.deepEqual(rows, [{ n: 1 }]);
  // Every connection is back in the pool outside any transaction.
  const open = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
    where datname = current_database() and state like ${'idle in transaction%'}`.execute(handle.db);
  assert.equal(open.rows[0]?.n, 0);
});

test("postgres: a write's closing statement carries its COMMIT; one that fails rolls the write back", async (t) => {
  const handle = openPostgres<Record<string, never>>(await createPostgresDatabase());
  t.after(() => handle.close());
  const db = handle.db as unknown as Db;
  await sql`create table closed (n int primary key)`.execute(handle.db);
  // As the object store's counters close a write: one statement, marked when it is the last.
  const insert = preparedQuery((_db, a: { n: number }) => sql`insert into closed values (${a.n}::int)`);
  const trips: string[] = [];
  const stop = observeRoundTrips((text) => trips.push(text));
  t.after(stop);
  const writer = new Writer(db, { emit: () => {} }, { error: () => {} });
  await writer.write(async (w) => {
    await sql`insert into closed values (${1}::int)`.execute(w.trx);
    w.atClose((last) => insert.run(w.trx, { n: 2 }, last));
  });
  // BEGIN with the first insert; the closing insert with the COMMIT behind it.
  assert.deepEqual(trips.splice(0), ['begin', `insert into closed values ($1::int)${COMMIT_BEHIND}`]);
  // A closing statement that fails (a duplicate here) turns its COMMIT into a rollback.
  await assert.rejects(
    writer.write(async (w) => {
      await sql`insert into closed values (${3}::int)`.execute(w.trx);
      w.atClose((last) => insert.run(w.trx, { n: 1 }, last));
    }),
    /duplicate key/,
  );
  const rows = (await sql<{ n: number }>`select n from closed order by n`.execute(handle.db)).rows;
  assert.deepEqual(rows, [{ n: 1 }, { n: 2 }]);
  // The next transactions on the same connections commit as before (the pool has 10).
  for (let n = 10; n < 30; n += 1)
    await writer.write(async ({ trx }) => {
      await sql`insert into closed values (${n}::int)`.execute(trx);
    });
  const count = await sql<{ n: number }>`select count(*)::int as n from closed`.execute(handle.db);
  assert.equal(count.rows[0]?.n, 22);
  const open = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
    where datname = current_database() and state like ${'idle in transaction%'}`.execute(handle.db);
  assert.equal(open.rows[0]?.n, 0);
});

test('postgres: an idle connection the server ends does not end the process; the next query opens another', async (t) => {
  const url = await createPostgresDatabase();
  const handle = openPostgres<Record<string, never>>(url);
  t.after(() => handle.close());
  const pid = async () =>
    (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(handle.db)).rows[0]?.pid;
  const first = await pid();
  const admin = openPostgres<Record<string, never>>(url);
  t.after(() => admin.close());
  const ended = await sql<{ ended: boolean }>`select pg_terminate_backend(${first}::int) as ended`.execute(
    admin.db,
  );
  assert.equal(ended.rows[0]?.ended, true);
  await until(async () => (await pid().catch(() => first)) !== first, 'a query on a new connection');
});

test('postgres: a lent-out connection the server ends between two queries does not end the process', async (t) => {
  const url = await createPostgresDatabase();
  const handle = openPostgres<Record<string, never>>(url);
  t.after(() => handle.close());
  const admin = openPostgres<Record<string, never>>(url);
  t.after(() => admin.close());
  const backends = async (pid: number) =>
    (
      await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where pid = ${pid}`.execute(
        admin.db,
      )
    ).rows[0]?.n;
  const first = await handle.db.connection().execute(async (lent) => {
    const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(lent)).rows[0]?.pid ?? 0;
    await sql`select pg_terminate_backend(${pid}::int)`.execute(admin.db);
    // The server's goodbye reaches this connection while no query of ours is on it.
    await until(async () => (await backends(pid)) === 0, 'the backend gone');
    await assert.rejects(sql`select 1`.execute(lent));
    return pid;
  });
  const next = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(handle.db)).rows[0]?.pid;
  assert.notEqual(next, first);
});

test('postgres: a connection whose statement the server answers FATAL is not lent again', async (t) => {
  const url = await createPostgresDatabase();
  const handle = openPostgres<Record<string, never>>(url);
  t.after(() => handle.close());
  const first = await handle.db.connection().execute(async (lent) => {
    const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(lent)).rows[0]?.pid ?? 0;
    // The backend ends itself while the statement runs: its FATAL answers the statement, and the
    // socket's end is read only later, after the connection went back to the pool.
    await assert.rejects(sql`select pg_terminate_backend(pg_backend_pid())`.execute(lent), /terminat/);
    return pid;
  });
  // At once, before the socket's end is read: a fresh connection, not the ended one.
  const next = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(handle.db)).rows[0]?.pid;
  assert.ok(next !== undefined && next !== first, `another backend than ${first}`);
});

test('postgres: the message bus listens again after the server ends its listening connection', async (t) => {
  const url = await createPostgresDatabase();
  const handle = openPostgres<Record<string, never>>(url);
  t.after(() => handle.close());
  const admin = openPostgres<Record<string, never>>(url);
  t.after(() => admin.close());
  const received: string[] = [];
  await handle.bus?.subscribe('bus_test', (payload) => received.push(payload));
  await handle.bus?.publish('bus_test', ['before']);
  await until(() => received.includes('before'), 'the first message');
  const ended = await sql<{
    n: number;
  }>`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
    where query = 'LISTEN bus_test'`.execute(admin.db);
  assert.equal(ended.rows[0]?.n, 1);
  let sent = 0;
  await until(
    async () => {
      await handle.bus?.publish('bus_test', [`after ${++sent}`]);
      return received.some((payload) => payload.startsWith('after'));
    },
    'a message after the listener was ended',
    10_000,
    50,
  );
});
