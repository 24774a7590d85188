/**
 * The order in which SQLite walks the visible-tags statement (listVisibleTags, docs/query-plans.md):
 * from the objects' tags to each one's policy by its key, never through every policy of the
 * reader (a user holds one per tag it owns or was shared, up to 1,000 of its own). SQLite has
 * no table statistics here, so the written join order decides; PostgreSQL plans by its
 * statistics, and there only the answer is checked.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CompiledQuery } from 'kysely';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { observeQueries } from '../../db/dialect/observe.js';
import { listVisibleTags } from './object-store.repository.js';

for (const dialect of DIALECTS) {
  describe(`object store query plans (${dialect})`, () => {
    test("a page's visible tags start from the objects' tags, not from the reader's policies", async (t) => {
      const app = await build(t, { dialect });
      const { store, tags } = app.services;
      const { user } = await loggedInClient(app);
      const own: string[] = [];
      for (let i = 0; i < 5; i += 1) own.push(await tags.createTag(user.uuid, { label: `tag ${i}` }));
      const objects: string[] = [];
      for (let i = 0; i < 50; i += 1) {
        const { uuid } = await store.write((w) =>
          store.createObject(w, {
            type: 'contact',
            owner: user.uuid,
            description: `c${i}`,
            data: { firstname: 'C', lastname: `${i}`, entry: {} },
            checkQuota: false,
          }),
        );
        objects.push(uuid);
      }
      const tagged = await store.getForRead(store.db, user.uuid, objects[0]!);
      await store.write((w) => store.tagObject(w, user.uuid, tagged, own.slice(0, 2), []));

      let statement: CompiledQuery | undefined;
      const stop = observeQueries((query) => {
        statement = query;
      });
      let rows: Awaited<ReturnType<typeof listVisibleTags>>;
      try {
        rows = await listVisibleTags(store.db, objects, [user.uuid]);
      } finally {
        stop();
      }
      const tagAll = (await tags.getUserTags(user.uuid)).tag_all;
      assert.equal(rows.length, 52);
      assert.deepEqual(
        rows.filter((row) => row.object === objects[0]).map((row) => row.tag),
        [tagAll, ...own.slice(0, 2)].sort(),
      );
      assert.ok(rows.every((row) => row.user_uuid === user.uuid));

      if (dialect !== 'sqlite') return;
      assert.ok(statement);
      const plan = (
        await store.db.executeQuery<{ detail: string }>(
          CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]),
        )
      ).rows.map((row) => row.detail);
      // The first table walked is object_tag, by the object; tag_policy is reached by its key.
      assert.match(
        plan[0]!,
        /^SEARCH ot USING COVERING INDEX sqlite_autoindex_object_tag_1 \(object=\?\)/,
        plan.join('\n'),
      );
      assert.ok(
        plan.some((line) =>
          /^SEARCH tp USING INDEX sqlite_autoindex_tag_policy_1 \(tag=\? AND user_uuid=\?\)/.test(line),
        ),
        plan.join('\n'),
      );
      assert.ok(!plan.some((line) => line.includes('tag_policy_user')), plan.join('\n'));
    });
  });
}
