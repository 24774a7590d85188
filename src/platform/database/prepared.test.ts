import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { build, DIALECTS } from '../../../test/helper.js';
import type { Db } from './database.js';
import { preparedQuery } from './prepared.js';

interface ProbeRow {
  id: number;
  name: string;
  owner: string | null;
}

/** The probe table is not in `Tables`: the shapes go through an untyped handle. */
// biome-ignore lint/suspicious/noExplicitAny: a table only this test creates.
const untyped = (db: Db) => db as any;

async function probeTable(db: Db): Promise<void> {
  await sql`CREATE TABLE prepared_probe (id integer PRIMARY KEY, name text NOT NULL, owner text)`.execute(db);
  for (let id = 1; id <= 6; id++)
    await sql`INSERT INTO prepared_probe (id, name, owner) VALUES (${id}, ${`n${id}`}, ${id % 2 ? 'odd' : null})`.execute(
      db,
    );
}

/** One shape with a constant, an optional condition and an `in` list. */
function shape(db: Db, a: { ids: readonly number[]; owner?: string | undefined; above: number }) {
  let query = untyped(db)
    .selectFrom('prepared_probe')
    .selectAll()
    .where('id', 'in', a.ids)
    .where('id', '>', a.above)
    .where('name', '!=', 'nobody');
  if (a.owner !== undefined) query = query.where('owner', '=', a.owner);
  return query.orderBy('id');
}

const byIds = preparedQuery<{ ids: readonly number[]; owner?: string | undefined; above: number }, ProbeRow>(
  shape,
);
const rename = preparedQuery((db, a: { id: number; name: string }) =>
  untyped(db).updateTable('prepared_probe').set({ name: a.name }).where('id', '=', a.id),
);

for (const dialect of DIALECTS) {
  describe(`prepared queries (${dialect})`, () => {
    test('give the rows the builder gives, for every in-list length and optional condition', async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      const cases = [
        { ids: [1, 2, 3], above: 0 },
        { ids: [4, 5], above: 0 },
        { ids: [1, 2, 3, 4, 5, 6], above: 2 },
        { ids: [1, 2, 3], above: 1, owner: 'odd' },
        { ids: [5, 6, 1], above: 0, owner: 'odd' },
        { ids: [6], above: 0, owner: 'nobody' },
        { ids: [2, 3, 4], above: 3 },
      ];
      for (const args of cases) {
        const expected = await shape(db, args).execute();
        assert.deepEqual(await byIds.all(db, args), expected, JSON.stringify(args));
        assert.deepEqual(await byIds.first(db, args), expected[0], JSON.stringify(args));
      }
      assert.deepEqual(
        (await byIds.all(db, { ids: [1, 3, 5], above: 0, owner: 'odd' })).map((row) => row.id),
        [1, 3, 5],
      );
    });

    test('the last layout is reused only for the same names and kinds in the same order', async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      // Each case differs from the one before it in one way the fast path compares: an in-list's
      // length, an argument present or undefined or absent, a value or null, the arguments' order.
      const owned = preparedQuery<
        { above: number; owner: string | null | undefined; ids?: number[] },
        ProbeRow
      >((handle, a) => {
        let query = untyped(handle).selectFrom('prepared_probe').selectAll().where('id', '>', a.above);
        if (a.owner === null) query = query.where('owner', 'is', null);
        else if (a.owner !== undefined) query = query.where('owner', '=', a.owner);
        if (a.ids !== undefined) query = query.where('id', 'in', a.ids);
        return query.orderBy('id');
      });
      const ids = (rows: ProbeRow[]) => rows.map((row) => row.id);
      const cases: [{ above: number; owner: string | null | undefined; ids?: number[] }, number[]][] = [
        [{ above: 0, owner: 'odd' }, [1, 3, 5]],
        [{ above: 0, owner: 'odd' }, [1, 3, 5]],
        [{ above: 2, owner: null }, [4, 6]],
        [{ above: 0, owner: undefined }, [1, 2, 3, 4, 5, 6]],
        [{ above: 0, owner: 'odd', ids: [1, 2, 3] }, [1, 3]],
        [{ above: 0, owner: 'odd', ids: [1, 2, 3, 5] }, [1, 3, 5]],
        [{ above: 0, owner: 'odd', ids: [5] }, [5]],
        [{ owner: null, above: 1 }, [2, 4, 6]],
        [{ above: 1, owner: null }, [2, 4, 6]],
        [{ above: 4, owner: 'odd' }, [5]],
      ];
      for (const [args, expected] of cases)
        assert.deepEqual(ids(await owned.all(db, args)), expected, JSON.stringify(args));
    });

    test('run inside a transaction and write', async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      await app.services.writer.write(async ({ trx }) => {
        const result = await rename.run(trx, { id: 2, name: 'two' });
        assert.equal(Number(result.numAffectedRows), 1);
        assert.equal((await byIds.first(trx, { ids: [2], above: 0 }))?.name, 'two');
      });
      assert.equal((await byIds.first(db, { ids: [2], above: 0 }))?.name, 'two');
      assert.equal(Number((await rename.run(db, { id: 99, name: 'none' })).numAffectedRows), 0);
    });

    test("a read on the database handle never sees an open write's rows", async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      // SQLite's reads may run beside Kysely's driver (db/dialect/direct.ts), on the connection an
      // open write holds: they must wait for it as Kysely's would, and see only what committed.
      let renamed!: () => void;
      const wrote = new Promise<void>((resolve) => {
        renamed = resolve;
      });
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const write = app.services.writer.write(async ({ trx }) => {
        await rename.run(trx, { id: 3, name: 'three' });
        renamed();
        await held;
      });
      await wrote;
      const seen: string[] = [];
      const read = byIds.first(db, { ids: [3], above: 0 }).then((row) => seen.push(`read ${row?.name}`));
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      seen.push('commit');
      release();
      await write;
      await read;
      // SQLite's read waits for the commit. PostgreSQL's runs on a connection of its own and sees
      // what committed when it ran: the old name, or the new one if it ran after the commit.
      if (dialect === 'sqlite') assert.deepEqual(seen, ['commit', 'read three']);
      else assert.ok(seen.includes('read n3') || seen.includes('read three'), seen.join(', '));
    });

    test('refuse a shape that changes or inlines an argument', async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      const changed = preparedQuery((handle, a: { name: string }) =>
        untyped(handle).selectFrom('prepared_probe').selectAll().where('name', '=', `${a.name}x`),
      );
      await assert.rejects(changed.all(db, { name: 'n1' }), /changed before binding/);
      const inlined = preparedQuery((handle, a: { name: string }) =>
        untyped(handle).selectFrom('prepared_probe').selectAll().where('name', '=', sql.lit(a.name)),
      );
      await assert.rejects(inlined.all(db, { name: 'n1' }), /inlined/);
      const unused = preparedQuery((handle, _a: { name: string }) =>
        untyped(handle).selectFrom('prepared_probe').selectAll(),
      );
      await assert.rejects(unused.all(db, { name: 'n1' }), /not a bound parameter/);
    });
  });
}
