import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { build, DIALECTS } from '../../../test/helper.js';
import { observeQueries } from '../../db/dialect/observe.js';
import type { Db } from './database.js';
import { type UnitOfWork, Writer, type WriterOptions } from './unit-of-work.js';

async function probeTable(db: Db): Promise<void> {
  await sql`CREATE TABLE uow_probe (n integer NOT NULL)`.execute(db);
}

async function rows(db: Db): Promise<number[]> {
  const result = await sql<{ n: number }>`SELECT n FROM uow_probe ORDER BY n`.execute(db);
  return result.rows.map((row) => Number(row.n));
}

/** A writer without events or log that runs a write again after an error named 'conflict'. */
function conflictRetrying(db: Db, options: WriterOptions): Writer {
  return new Writer(
    db,
    { emit: () => {} },
    { error: () => {} },
    { retryable: (error) => (error as Error).message === 'conflict', ...options },
  );
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
      const writer = conflictRetrying(db, { attempts: 3 });
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

    test('writes started together: one that fails changes nothing and fails alone, the others commit with their hooks', async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      const seen: string[] = [];
      const settled = await Promise.allSettled(
        [1, 2, 3, 4, 5].map((n) =>
          app.services.writer.write(async (w) => {
            await insert(w, n);
            w.afterCommit(() => {
              seen.push(`hook ${n}`);
            });
            if (n === 3) throw new Error('write 3 fails');
            await insert(w, n * 10);
            return `answer ${n}`;
          }),
        ),
      );
      assert.deepEqual(
        settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
        ['answer 1', 'answer 2', 'write 3 fails', 'answer 4', 'answer 5'],
      );
      // Concurrent writes commit in any order on PostgreSQL: the set of hooks is what counts.
      assert.deepEqual(seen.sort(), ['hook 1', 'hook 2', 'hook 4', 'hook 5']);
      assert.deepEqual(await rows(db), [1, 2, 4, 5, 10, 20, 40, 50]);
    });

    test('a hook may start a write of its own and wait for it', async (t) => {
      const app = await build(t, { dialect });
      const { db } = app.database;
      await probeTable(db);
      const { writer } = app.services;
      const seen: string[] = [];
      await Promise.all(
        [1, 2].map((n) =>
          writer.write(async (w) => {
            await insert(w, n);
            w.afterCommit(async () => {
              await writer.write((inner) => insert(inner, n + 100));
              seen.push(`hook ${n} wrote ${(await rows(db)).includes(n + 100)}`);
            });
          }),
        ),
      );
      assert.deepEqual(seen.sort(), ['hook 1 wrote true', 'hook 2 wrote true']);
      assert.deepEqual(await rows(db), [1, 2, 101, 102]);
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

describe('group commit (sqlite)', () => {
  function counting(): { begins: () => number; stop: () => void } {
    let begins = 0;
    const stop = observeQueries((query) => {
      if (/^begin/i.test(query.sql)) begins++;
    });
    return { begins: () => begins, stop };
  }

  test('writes that arrive together share one transaction; without group commit each has its own', async (t) => {
    const app = await build(t, { dialect: 'sqlite' });
    const { db } = app.database;
    await probeTable(db);
    const seen: string[] = [];
    const grouped = counting();
    t.after(grouped.stop);
    await Promise.all(
      [1, 2, 3, 4].map((n) =>
        app.services.writer.write(async (w) => {
          await insert(w, n);
          // After the shared COMMIT every write of the group is visible to every hook.
          w.afterCommit(async () => {
            seen.push(`hook ${n}: ${(await rows(db)).join()}`);
          });
        }),
      ),
    );
    grouped.stop();
    assert.equal(grouped.begins(), 1);
    assert.deepEqual(seen, ['hook 1: 1,2,3,4', 'hook 2: 1,2,3,4', 'hook 3: 1,2,3,4', 'hook 4: 1,2,3,4']);

    const alone = conflictRetrying(db, {});
    const single = counting();
    t.after(single.stop);
    await Promise.all([5, 6, 7, 8].map((n) => alone.write((w) => insert(w, n))));
    single.stop();
    assert.equal(single.begins(), 4);
  });

  test('a retryable failure runs again inside its savepoint, keeping the rows of the others', async (t) => {
    const app = await build(t, { dialect: 'sqlite' });
    const { db } = app.database;
    await probeTable(db);
    const writer = conflictRetrying(db, { attempts: 2, groupCommit: true });
    let tries = 0;
    await Promise.all([
      writer.write((w) => insert(w, 1)),
      writer.write(async (w) => {
        tries++;
        await insert(w, 10 + tries);
        if (tries === 1) throw new Error('conflict');
      }),
      writer.write((w) => insert(w, 3)),
    ]);
    assert.equal(tries, 2);
    assert.deepEqual(await rows(db), [1, 3, 12]);
  });

  test('when the shared COMMIT fails, every write of the group fails and no hook runs', async (t) => {
    const app = await build(t, { dialect: 'sqlite' });
    const { db } = app.database;
    await probeTable(db);
    // A deferred foreign key is checked at COMMIT: the one way to make a COMMIT fail at will.
    await sql`CREATE TABLE uow_parent (id integer PRIMARY KEY)`.execute(db);
    await sql`CREATE TABLE uow_child (parent integer REFERENCES uow_parent (id) DEFERRABLE INITIALLY DEFERRED)`.execute(
      db,
    );
    const seen: string[] = [];
    const settled = await Promise.allSettled([
      app.services.writer.write(async (w) => {
        await insert(w, 1);
        w.afterCommit(() => {
          seen.push('hook 1');
        });
      }),
      app.services.writer.write(async (w) => {
        await sql`INSERT INTO uow_child (parent) VALUES (42)`.execute(w.trx);
        w.afterCommit(() => {
          seen.push('hook 2');
        });
      }),
    ]);
    assert.deepEqual(
      settled.map((s) => s.status),
      ['rejected', 'rejected'],
    );
    assert.match(String((settled[0] as PromiseRejectedResult).reason), /FOREIGN KEY/);
    assert.deepEqual(seen, []);
    assert.deepEqual(await rows(db), []);
    // The writer goes on: the next write commits.
    await app.services.writer.write((w) => insert(w, 2));
    assert.deepEqual(await rows(db), [2]);
  });
});
