import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { build, DIALECTS } from '../../../test/helper.js';
import type { Db } from './database.js';
import { type UnitOfWork, Writer } from './unit-of-work.js';

async function probeTable(db: Db): Promise<void> {
  await sql`CREATE TABLE uow_probe (n integer NOT NULL)`.execute(db);
}

async function rows(db: Db): Promise<number[]> {
  const result = await sql<{ n: number }>`SELECT n FROM uow_probe ORDER BY n`.execute(db);
  return result.rows.map((row) => Number(row.n));
}

function insert(w: UnitOfWork, n: number) {
  return sql`INSERT INTO uow_probe (n) VALUES (${n})`.execute(w.trx);
}

for (const dialect of DIALECTS) {
  describe(`unit of work (${dialect})`, () => {
    test('hooks run after the commit, in order, and see the committed rows', async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      const seen: string[] = [];
      const result = await app.services.writer.write(async (w) => {
        await insert(w, 1);
        w.afterCommit(async () => {
          seen.push(`first ${(await rows(db)).join()}`);
        });
        w.afterCommit(() => {
          seen.push('second');
        });
        seen.push('body');
        return 'answer';
      });
      assert.equal(result, 'answer');
      assert.deepEqual(seen, ['body', 'first 1', 'second']);
    });

    test('a rollback runs no hook and keeps no row', async (t) => {
      const app = await build(t, { dialect });
      await probeTable(app.database.db);
      const seen: string[] = [];
      await assert.rejects(
        app.services.writer.write(async (w) => {
          await insert(w, 1);
          w.afterCommit(() => {
            seen.push('hook');
          });
          throw new Error('the call fails');
        }),
        /the call fails/,
      );
      assert.deepEqual(seen, []);
      assert.deepEqual(await rows(app.database.db), []);
    });

    test("a function given the caller's unit of work joins it: its hooks wait for the outer commit", async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      const seen: string[] = [];
      const part = async (w: UnitOfWork, n: number) => {
        await insert(w, n);
        w.afterCommit(() => {
          seen.push(`part ${n}`);
        });
      };
      await app.services.writer.write(async (w) => {
        await part(w, 1);
        await part(w, 2);
        assert.deepEqual(seen, [], 'nothing runs before the outer commit');
      });
      assert.deepEqual(seen, ['part 1', 'part 2']);
      await assert.rejects(
        app.services.writer.write(async (w) => {
          await part(w, 3);
          throw new Error('outer fails after the part');
        }),
      );
      assert.deepEqual(seen, ['part 1', 'part 2']);
      assert.deepEqual(await rows(db), [1, 2]);
    });

    test('a failing hook is logged, not thrown, and the next hooks still run', async (t) => {
      const app = await build(t, { dialect });
      const logged: unknown[] = [];
      const events: string[] = [];
      const writer = new Writer(
        app.database.db,
        { emit: (target, name) => events.push(`${name} ${target.users?.join()}`) },
        { error: (entry: unknown) => logged.push(entry) },
      );
      await writer.write(async (w) => {
        w.afterCommit(() => {
          throw new Error('file already gone');
        });
        w.emit(['a', 'a', 'b'], 'thing_new', {});
        w.emit([], 'nobody_hears', {});
      });
      assert.equal(logged.length, 1);
      assert.deepEqual(events, ['thing_new a,b']);
    });

    test('a retryable failure runs the write again with fresh hooks; others are thrown at once', async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      const writer = new Writer(
        db,
        { emit: () => {} },
        { error: () => {} },
        {
          attempts: 3,
          retryable: (error) => (error as Error).message === 'conflict',
        },
      );
      const seen: number[] = [];
      let attempt = 0;
      await writer.write(async (w) => {
        attempt++;
        await insert(w, attempt);
        w.afterCommit(() => {
          seen.push(attempt);
        });
        if (attempt < 3) throw new Error('conflict');
      });
      assert.deepEqual(seen, [3]);
      assert.deepEqual(await rows(db), [3]);
      attempt = 0;
      await assert.rejects(
        writer.write(async () => {
          attempt++;
          throw new Error('wrong');
        }),
      );
      assert.equal(attempt, 1);
    });

    test('a one-statement write commits its statement, then runs its hooks; a second statement fails it', async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      const seen: string[] = [];
      const answer = await app.services.writer.writeStatement(async (w) => {
        await insert(w, 1);
        w.afterCommit(async () => {
          seen.push(`hook ${(await rows(db)).join()}`);
        });
        return 'answer';
      });
      assert.equal(answer, 'answer');
      assert.deepEqual(seen, ['hook 1']);
      await assert.rejects(
        app.services.writer.writeStatement(async (w) => {
          await insert(w, 2);
          await insert(w, 3);
          w.afterCommit(() => {
            seen.push('never');
          });
        }),
        /a one-statement write ran a second statement/,
      );
      assert.deepEqual(seen, ['hook 1']);
    });
  });
}
