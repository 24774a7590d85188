/**
 * Concurrent writes to one object serialise: deleting an object while other
 * requests tag it answers every call ok or its spec status, never fail, and leaves no object_tag
 * row without its object. On PostgreSQL the object row is locked by the write that reads it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';

const PAIRS = 20;

for (const dialect of DIALECTS) {
  describe(`parallel writes to one object (${dialect})`, () => {
    test('tag while deleting: ok or the spec status, no orphan rows', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const tag = await client.call('POST', '/api/tag', { label: 'race' });
      assert.equal(tag.status, 'ok');
      const kinds = [
        { url: '/api/contact', body: { firstname: 'Ada', lastname: 'Race' }, wrong: 'wrong-contact' },
        { url: '/api/xobject', body: { xtype: 'race', data: { n: 1 } }, wrong: 'wrong-object' },
      ];
      const answers: { call: string; status: string; expected: string[] }[] = [];
      for (const kind of kinds) {
        const uuids: string[] = [];
        for (let i = 0; i < PAIRS; i++) {
          const created = await client.call('POST', kind.url, kind.body);
          assert.equal(created.status, 'ok');
          uuids.push(created.uuid as string);
        }
        await Promise.all(
          uuids.flatMap((uuid, i) => {
            const purge = i % 2 === 0 ? '?purge=1' : '';
            const calls = [
              () =>
                client.call('DELETE', `${kind.url}/${uuid}${purge}`).then((a) =>
                  answers.push({
                    call: `DELETE ${kind.url}`,
                    status: a.status,
                    expected: ['ok', kind.wrong],
                  }),
                ),
              () =>
                client
                  .call('POST', `/api/object/${uuid}/tag`, { add: [tag.uuid] })
                  .then((a) =>
                    answers.push({ call: 'tag', status: a.status, expected: ['ok', 'wrong-object'] }),
                  ),
              () =>
                client
                  .call('POST', `/api/object/${uuid}/tag`, { add: [tag.uuid] })
                  .then((a) =>
                    answers.push({ call: 'tag again', status: a.status, expected: ['ok', 'wrong-object'] }),
                  ),
            ];
            const order =
              i % 3 === 0 ? calls : i % 3 === 1 ? calls.reverse() : [calls[1]!, calls[0]!, calls[2]!];
            return order.map((start) => start());
          }),
        );
      }
      for (const answer of answers)
        assert.ok(answer.expected.includes(answer.status), JSON.stringify(answer));
      const { rows } = await sql<{ n: number }>`
        SELECT count(*) AS n FROM object_tag ot WHERE NOT EXISTS (SELECT 1 FROM object o WHERE o.uuid = ot.object)
      `.execute(app.services.store.db);
      assert.equal(Number(rows[0]!.n), 0);
    });
  });
}
