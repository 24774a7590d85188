/**
 * The SQLite dialect's transactions, with another process's connection writing the same file
 * (as Kamailio's usrloc does on a SQLite node).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { until } from '../../../test/helper.js';
import type { Tables } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';
import { Writer } from '../../platform/database/unit-of-work.js';
import { directRunOf } from './direct.js';
import { checkpointThread, keepStatements, openSqlite, STATEMENT_CACHE } from './sqlite.js';

/** A handle on a fresh file with a table `t`, and another connection to that file. */
async function twoConnections(t: TestContext) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-sqlite-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'db.sqlite');
  const handle = openSqlite<Tables>(file);
  t.after(() => handle.close());
  await sql`create table t (x integer)`.execute(handle.db);
  const other = new SQLite(file);
  t.after(() => other.close());
  return { handle, other };
}

test('a transaction takes the write lock at its start: a writer in between waits, and the read-then-write does not fail with SQLITE_BUSY', async (t) => {
  const { handle, other } = await twoConnections(t);
  other.pragma('busy_timeout = 0'); // one thread: waiting here would wait for ever

  let otherWrite = 'committed';
  const writer = new Writer(handle.db, { emit: () => undefined }, console);
  await writer.write(async ({ trx }) => {
    await sql`select count(*) from t`.execute(trx);
    try {
      other.prepare('insert into t (x) values (1)').run();
    } catch (error) {
      otherWrite = (error as { code?: string }).code ?? 'failed';
    }
    await sql`insert into t (x) values (2)`.execute(trx);
  });
  // Deferred, the other write would commit between the read and the write, and the write would
  // fail at once (SQLITE_BUSY_SNAPSHOT, no busy wait).
  assert.equal(otherWrite, 'SQLITE_BUSY');
  const rows = await sql<{ x: number }>`select x from t`.execute(handle.db);
  assert.deepEqual(
    rows.rows.map((row) => row.x),
    [2],
  );
});

test("a write waiting for another process's write lock leaves the event loop free, then commits", async (t) => {
  // Another connection (Kamailio's, in production) holds the write lock for 300 ms; it can
  // only let go on a timer of this thread, which SQLite's own busy wait would never let run.
  const { handle, other } = await twoConnections(t);
  other.exec('begin immediate');
  other.prepare('insert into t (x) values (1)').run();
  let turns = 0;
  const ticker = setInterval(() => turns++, 10);
  setTimeout(() => other.exec('commit'), 300);

  const writer = new Writer(handle.db, { emit: () => undefined }, console);
  await Promise.all([
    sql`insert into t (x) values (2)`.execute(handle.db),
    writer.write(async ({ trx }) => {
      await sql`insert into t (x) values (3)`.execute(trx);
    }),
  ]);
  clearInterval(ticker);
  // A busy wait on this thread would allow no turn at all in the 300 ms; a loaded machine may
  // allow far fewer than the 30 an idle one does.
  assert.ok(turns >= 3, `the event loop turned while the writes waited (${turns} turns)`);
  const rows = await sql<{ x: number }>`select x from t order by x`.execute(handle.db);
  assert.deepEqual(
    rows.rows.map((row) => row.x),
    [1, 2, 3],
  );
});

test('WAL checkpoints run on a thread of their own once the WAL has grown, and stop with the handle', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-sqlite-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'db.sqlite');
  const handle = openSqlite<Tables>(file, { startBytes: 64 * 1024, intervalMs: 50 });
  await sql`create table t (x text)`.execute(handle.db);
  const before = fs.statSync(file).size;
  // About 1 MB in the WAL: far below the main connection's own automatic checkpoint.
  for (let i = 0; i < 64; i++)
    await sql`insert into t (x) values (${'x'.repeat(16 * 1024)})`.execute(handle.db);
  // The pages reach the database file only by a checkpoint.
  await until(() => fs.statSync(file).size >= before + 1024 * 1024, 'the WAL was checkpointed', 20_000);
  const rows = await sql<{ n: number }>`select count(*) as n from t`.execute(handle.db);
  assert.equal(Number(rows.rows[0]!.n), 64);
  await handle.close();
});

test('closing after the checkpoint thread ended on its own (it could not open the file) does not wait for ever', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-sqlite-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'db.sqlite');
  fs.writeFileSync(`${file}-wal`, 'x');
  // The thread of a test node whose directory the test removed meanwhile fails at its start.
  const started = new Promise<Worker>((resolve) => process.once('worker', resolve));
  const checkpoints = checkpointThread(file, {
    startBytes: 0,
    intervalMs: 10,
    script: "throw new Error('cannot open the database')",
  });
  const worker = await started;
  await new Promise((resolve) => worker.once('exit', resolve));
  // Before, stop() began listening for the exit only now, and waited for ever.
  const stopped = await Promise.race([
    checkpoints.stop().then(() => 'stopped'),
    new Promise((resolve) => setTimeout(resolve, 10_000, 'still waiting')),
  ]);
  assert.equal(stopped, 'stopped');
});

test("a write's prepared statements run beside Kysely's executor; a failing one fails only its write", async (t) => {
  const { handle } = await twoConnections(t);
  const insert = preparedQuery((d, a: { x: number }) =>
    d.insertInto('t' as never).values({ x: a.x } as never),
  );
  const count = preparedQuery((d, _a: { all: boolean }) =>
    d.selectFrom('t' as never).select(sql<number>`count(*)`.as('n')),
  );
  const writer = new Writer(handle.db, { emit: () => undefined }, console, { groupCommit: true });
  const transactions: object[] = [];
  const writes = [1, 2, 3].map((x) =>
    writer.write(async ({ trx }) => {
      // The group's transaction runs its statements at once, while it is open.
      transactions.push(trx.getExecutor());
      assert.ok(directRunOf(trx.getExecutor()));
      await insert.run(trx, { x });
      if (x === 2) throw new Error('refused');
      return (await count.first(trx, { all: true }))?.n;
    }),
  );
  const settled = await Promise.allSettled(writes);
  assert.deepEqual(
    settled.map((s) => (s.status === 'fulfilled' ? s.value : 'rejected')),
    [1, 'rejected', 2],
  );
  // Once it has ended, not any more; and the database's own handle never.
  for (const executor of transactions) assert.equal(directRunOf(executor), undefined);
  assert.equal(directRunOf(handle.db.getExecutor()), undefined);
  const rows = await sql<{ x: number }>`select x from t order by x`.execute(handle.db);
  assert.deepEqual(
    rows.rows.map((r) => r.x),
    [1, 3],
  );
});

test('reads close together share a held shared lock, still see every commit, and let go of it soon after', async (t) => {
  const { handle, other } = await twoConnections(t);
  other.pragma('busy_timeout = 0');
  const values = preparedQuery((d, _a: { all: boolean }) =>
    d
      .selectFrom('t' as never)
      .select(sql<number>`x`.as('x'))
      .orderBy(sql`x`),
  );
  const read = async () => (await values.all(handle.db, { all: true })).map((row) => row.x);
  assert.deepEqual(await read(), []);
  // A second read at once: the process now holds the file's shared lock between statements.
  assert.deepEqual(await read(), []);
  // Another process's commit (Kamailio's) and the node's own write, while the lock is held.
  other.prepare('insert into t (x) values (1)').run();
  assert.deepEqual(await read(), [1]);
  await sql`insert into t (x) values (2)`.execute(handle.db);
  assert.deepEqual(await read(), [1, 2]);
  // Held: a checkpoint that must wait for every reader cannot finish yet...
  const [held] = other.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  assert.equal(held!.busy, 1, 'the shared lock is held between the reads');
  // ...and can once the reads have paused for longer than the hold.
  await until(
    () => (other.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[])[0]!.busy === 0,
    'the held lock was let go',
    5_000,
  );
  assert.deepEqual(await read(), [1, 2]);
});

test('the statement cache keeps a statement while it is used and drops the least recently used one past its bound', (t) => {
  const database = new SQLite(':memory:');
  t.after(() => database.close());
  keepStatements(database);
  const text = (i: number) => `select ${i} as n`;
  const first = database.prepare(text(0));
  assert.equal(database.prepare(text(0)), first);
  const second = database.prepare(text(1));
  // Fill the cache to its bound, using the first statement now and then: it stays recently used.
  for (let i = 2; i < STATEMENT_CACHE; i += 1) {
    database.prepare(text(i));
    if (i % 100 === 0) database.prepare(text(0));
  }
  assert.equal(database.prepare(text(0)), first);
  // One text more: the second statement, never used again, goes; the first stays.
  database.prepare(text(STATEMENT_CACHE));
  assert.equal(database.prepare(text(0)), first);
  const again = database.prepare(text(1));
  assert.notEqual(again, second);
  assert.deepEqual(again.get(), second.get());
  // A statement still iterating is not handed out again: a fresh one is.
  const iterating = database.prepare(text(0)).iterate();
  iterating.next();
  assert.notEqual(database.prepare(text(0)), first);
  iterating.return?.();
  assert.equal(database.prepare(text(0)), first);
});
