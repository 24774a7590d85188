/**
 * The SQLite dialect's transactions, with another process's connection writing the same file
 * (as Kamailio's usrloc does on a SQLite node).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { Writer } from '../../platform/database/unit-of-work.js';
import { openSqlite } from './sqlite.js';

test('a transaction takes the write lock at its start: a writer in between waits, and the read-then-write does not fail with SQLITE_BUSY', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-sqlite-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'db.sqlite');
  const handle = openSqlite(file);
  t.after(() => handle.close());
  await sql`create table t (x integer)`.execute(handle.db);
  const other = new SQLite(file);
  t.after(() => other.close());
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
