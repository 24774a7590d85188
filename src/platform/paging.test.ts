import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { build, DIALECTS } from '../../test/helper.js';
import { ApiError } from './errors.js';
import { newUuid, uuidSortKey, uuidTime } from './ids.js';
import { applyPage, type PageQuery, pageQuery } from './paging.js';

interface Item {
  uuid: string;
  sort_key: string;
  time: number;
}

describe('UUID v1', () => {
  test('sort keys order as the embedded time, and the time is readable', () => {
    const uuids = Array.from({ length: 200 }, () => newUuid());
    const sorted = [...uuids].sort((a, b) => (uuidSortKey(a) < uuidSortKey(b) ? -1 : 1));
    assert.deepEqual(sorted, uuids);
    assert.match(uuids[0]!, /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(Math.abs(uuidTime(uuids[0]!) - Date.now() / 1000) < 5);
  });
});

for (const dialect of DIALECTS) {
  describe(`paging (${dialect})`, () => {
    test('from, to, start, order and count select the right window', async (t) => {
      const app = await build(t, { dialect });
      const db = app.database.db as unknown as Kysely<{ page_item: Item }>;
      await db.schema
        .createTable('page_item')
        .addColumn('uuid', 'text', (c) => c.primaryKey())
        .addColumn('sort_key', 'text', (c) => c.notNull())
        .addColumn('time', 'bigint', (c) => c.notNull())
        .execute();
      const items: Item[] = Array.from({ length: 10 }, (_, i) => {
        const uuid = newUuid();
        return { uuid, sort_key: uuidSortKey(uuid), time: 1000 + i * 10 };
      });
      await db.insertInto('page_item').values(items).execute();
      const page = async (query: PageQuery) =>
        (
          await applyPage(
            db.selectFrom('page_item').select('time'),
            query,
            { time: 'time', key: 'sort_key' },
            3,
          ).execute()
        ).map((row) => Number(row.time));

      assert.deepEqual(await page({}), [1000, 1010, 1020]);
      assert.deepEqual(await page({ order: 'desc' }), [1090, 1080, 1070]);
      assert.deepEqual(await page({ from: 1035, count: 100 }), [1040, 1050, 1060, 1070, 1080, 1090]);
      assert.deepEqual(await page({ from: 1010, to: 1030, count: 100 }), [1010, 1020, 1030]);
      // start is exclusive and overrides from (asc) or to (desc)
      assert.deepEqual(await page({ start: items[4]!.uuid, from: 0 }), [1050, 1060, 1070]);
      assert.deepEqual(await page({ start: items[4]!.uuid, order: 'desc', to: 2000 }), [1030, 1020, 1010]);
      assert.deepEqual(await page({ start: items[4]!.uuid, to: 1060, count: 100 }), [1050, 1060]);
      await assert.rejects(
        page({ from: 20, to: 10 }),
        (error: unknown) => error instanceof ApiError && error.status === 'wrong-syntax',
      );
      await sql`DROP TABLE page_item`.execute(db);
    });
  });
}

describe('paging parameters', () => {
  test('count has the per-call default and range', () => {
    const schema = Type.Object(pageQuery({ default: 30, max: 500 }));
    const filled = Value.Default(schema, {}) as PageQuery;
    assert.equal(filled.count, 30);
    assert.ok(Value.Check(schema, { count: 500 }));
    assert.ok(!Value.Check(schema, { count: 501 }));
    assert.ok(!Value.Check(schema, { count: 0 }));
    assert.ok(!Value.Check(schema, { order: 'sideways' }));
  });
});
