import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, type Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';

const MISSING = '6f1c1a40-0000-1000-8000-000000000000';

async function contact(client: Client, firstname = 'C'): Promise<string> {
  return (await client.call('POST', '/api/contact', { firstname, lastname: 'L' })).uuid as string;
}

/** Users a and b, linked; c a stranger to both. */
async function people(app: App) {
  const a = await loggedInClient(app);
  const b = await loggedInClient(app);
  const c = await loggedInClient(app);
  await linkUsers(app, a.user.uuid, b.user.uuid);
  const tagsA = await app.services.tags.getUserTags(a.user.uuid);
  const tagsB = await app.services.tags.getUserTags(b.user.uuid);
  for (const client of [a.client, b.client, c.client]) await newEvents(client);
  return { a, b, c, tagsA, tagsB };
}

for (const dialect of DIALECTS) {
  describe(`tag (${dialect})`, () => {
    test('POST /api/tag: create (tag_new), GET one and all; bad input changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c } = await people(app);
      const created = await a.client.call('POST', '/api/tag', {
        label: 'Projects',
        policy: { [b.user.uuid]: 2 },
      });
      assert.equal(created.status, 'ok');
      const uuid = created.uuid as string;
      const expected = {
        tag: uuid,
        owner: a.user.uuid,
        label: 'Projects',
        foreign_use: false,
        policy: { [a.user.uuid]: 4, [b.user.uuid]: 2 },
      };
      for (const client of [a.client, b.client]) {
        const [event] = await newEvents(client, 'tag_new');
        assert.deepEqual({ ...event, id: 0, time: 0 }, { id: 0, time: 0, event: 'tag_new', ...expected });
      }
      assert.deepEqual(await newEvents(c.client), []);
      const { tag: _tag, ...view } = expected;
      assert.deepEqual(await a.client.call('GET', `/api/tag/${uuid}`), {
        status: 'ok',
        tag: { ...view, kind: 'custom' },
      });
      assert.equal((await b.client.call('GET', `/api/tag/${uuid}`)).status, 'ok');
      assert.equal((await c.client.call('GET', `/api/tag/${uuid}`)).status, 'wrong-tag');
      assert.equal((await c.client.call('GET', `/api/tag/${MISSING}`)).status, 'wrong-tag');
      assert.equal((await c.client.call('GET', '/api/tag/nope')).status, 'wrong-syntax');
      assert.ok(uuid in ((await b.client.call('GET', '/api/tag')).tag as object));
      assert.ok(!(uuid in ((await c.client.call('GET', '/api/tag')).tag as object)));

      const count = Object.keys((await a.client.call('GET', '/api/tag')).tag as object).length;
      for (const [body, status] of [
        [{}, 'missing-element'],
        [{ label: '' }, 'wrong-syntax'],
        [{ label: 'x'.repeat(101) }, 'wrong-syntax'],
        [{ label: 5 }, 'wrong-syntax'],
        [{ label: 'x', policy: { [c.user.uuid]: 1 } }, 'wrong-user'],
        [{ label: 'x', policy: { [MISSING]: 1 } }, 'wrong-user'],
        [{ label: 'x', policy: { [b.user.uuid]: 4 } }, 'wrong-syntax'],
        [{ label: 'x', policy: { [b.user.uuid]: -1 } }, 'wrong-syntax'],
        [{ label: 'x', policy: { [b.user.uuid]: 'read' } }, 'wrong-syntax'],
        [{ label: 'x', policy: { 'not-a-uuid': 1 } }, 'wrong-syntax'],
        [{ label: 'x', policy: { [a.user.uuid]: 3 } }, 'wrong-syntax'],
        [{ label: 'x', policy: [] }, 'wrong-syntax'],
        [{ label: 'x', foreign_use: 'yes' }, 'wrong-syntax'],
      ] as const) {
        assert.equal((await a.client.call('POST', '/api/tag', body)).status, status, JSON.stringify(body));
      }
      assert.equal(Object.keys((await a.client.call('GET', '/api/tag')).tag as object).length, count);
      assert.equal((await a.client.call('POST', '/api/tag', { label: 'x'.repeat(100) })).status, 'ok');
    });

    test('a tag shares its objects; policy changes (tag_modify, 0 = access lost) and unshare', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c } = await people(app);
      const tag = (await a.client.call('POST', '/api/tag', { label: 'T', policy: { [b.user.uuid]: 1 } }))
        .uuid as string;
      const object = await contact(a.client);
      await newEvents(a.client);
      await newEvents(b.client);
      assert.equal((await b.client.call('GET', `/api/contact/${object}`)).status, 'wrong-contact');
      const tagged = await a.client.call('POST', `/api/object/${object}/tag`, { add: [tag] });
      assert.equal(tagged.status, 'ok');
      assert.ok((tagged.tag as string[]).includes(tag));
      const [share] = await newEvents(b.client, 'object_share');
      assert.equal(share?.object, object);
      assert.equal(share?.user, a.user.uuid);
      const tagsB = await app.services.tags.getUserTags(b.user.uuid);
      // b sees the shared tag and its own tag_shared, not a's tag_all.
      assert.deepEqual(new Set(share?.tag as string[]), new Set([tag, tagsB.tag_shared]));
      assert.equal((await b.client.call('GET', `/api/contact/${object}`)).status, 'ok');
      const listed = (await b.client.call('GET', `/api/tag/${tagsB.tag_shared}/object`)).object as {
        uuid: string;
      }[];
      assert.deepEqual(
        listed.map((o) => o.uuid),
        [object],
      );
      const [objectTag] = await newEvents(a.client, 'object_tag');
      assert.deepEqual(objectTag?.tag_add, [tag]);
      assert.deepEqual(objectTag?.tag_delete, []);
      assert.equal(objectTag?.user, a.user.uuid);

      // Relabel: tag_modify to everyone with access to the tag.
      assert.equal((await a.client.call('POST', `/api/tag/${tag}`, { label: 'New' })).status, 'ok');
      for (const client of [a.client, b.client]) {
        const [modified] = await newEvents(client, 'tag_modify');
        assert.equal(modified?.label, 'New');
      }
      assert.deepEqual(await newEvents(c.client), []);

      // Only the owner changes a tag; strangers do not learn it exists.
      assert.equal((await b.client.call('POST', `/api/tag/${tag}`, { label: 'B' })).status, 'access-denied');
      assert.equal((await c.client.call('POST', `/api/tag/${tag}`, { label: 'C' })).status, 'wrong-tag');
      assert.equal((await a.client.call('POST', `/api/tag/${tag}`, { label: '' })).status, 'wrong-syntax');
      assert.equal(
        (await a.client.call('POST', `/api/tag/${tag}`, { policy: { [c.user.uuid]: 1 } })).status,
        'wrong-user',
      );
      assert.equal(((await a.client.call('GET', `/api/tag/${tag}`)).tag as { label: string }).label, 'New');

      // Removing b from the policy: b loses the object and the tag.
      await newEvents(b.client);
      assert.equal(
        (await a.client.call('POST', `/api/tag/${tag}`, { policy: { [b.user.uuid]: 0 } })).status,
        'ok',
      );
      const lostEvents = await newEvents(b.client);
      const lostTag = lostEvents.find((e) => e.event === 'tag_modify');
      assert.deepEqual(lostTag?.policy, { [a.user.uuid]: 4, [b.user.uuid]: 0 });
      const unshare = lostEvents.find((e) => e.event === 'object_unshare');
      assert.equal(unshare?.object, object);
      assert.equal((await b.client.call('GET', `/api/contact/${object}`)).status, 'wrong-contact');
      assert.equal((await b.client.call('GET', `/api/tag/${tag}`)).status, 'wrong-tag');
      assert.deepEqual((await b.client.call('GET', `/api/tag/${tagsB.tag_shared}/object`)).object, []);
    });

    test('system and share tags are fixed; DELETE /api/tag (tag_delete) only by the owner', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c, tagsA } = await people(app);
      for (const fixed of [tagsA.tag_all, tagsA.tag_trash, tagsA.share_read]) {
        assert.equal(
          (await a.client.call('POST', `/api/tag/${fixed}`, { label: 'x' })).status,
          'access-denied',
        );
        assert.equal((await a.client.call('DELETE', `/api/tag/${fixed}`)).status, 'access-denied');
      }
      assert.equal((await b.client.call('DELETE', `/api/tag/${tagsA.share_read}`)).status, 'access-denied');
      const tag = (await a.client.call('POST', '/api/tag', { label: 'T', policy: { [b.user.uuid]: 1 } }))
        .uuid as string;
      const object = await contact(a.client);
      await a.client.call('POST', `/api/object/${object}/tag`, { add: [tag] });
      await newEvents(a.client);
      await newEvents(b.client);
      assert.equal((await b.client.call('DELETE', `/api/tag/${tag}`)).status, 'access-denied');
      assert.equal((await c.client.call('DELETE', `/api/tag/${tag}`)).status, 'wrong-tag');
      assert.equal((await a.client.call('DELETE', `/api/tag/${tag}`)).status, 'ok');
      for (const client of [a.client, b.client]) {
        const [deleted] = await newEvents(client, 'tag_delete');
        assert.deepEqual({ ...deleted, id: 0, time: 0 }, { id: 0, time: 0, event: 'tag_delete', tag });
      }
      assert.equal((await b.client.call('GET', `/api/contact/${object}`)).status, 'wrong-contact');
      assert.equal((await a.client.call('GET', `/api/tag/${tag}`)).status, 'wrong-tag');
      const view = (await a.client.call('GET', `/api/contact/${object}`)).contact as { tag: string[] };
      assert.deepEqual(view.tag, [tagsA.tag_all]);
      assert.equal((await a.client.call('DELETE', `/api/tag/${tag}`)).status, 'wrong-tag');
    });

    test('POST /api/object/{uuid}/tag: statuses, personal tags on shared objects, object_tag recipients', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c, tagsA, tagsB } = await people(app);
      const object = await contact(a.client);
      const url = `/api/object/${object}/tag`;
      const own = (await a.client.call('POST', '/api/tag', { label: 'mine' })).uuid as string;
      const cTag = (await c.client.call('POST', '/api/tag', { label: 'c' })).uuid as string;
      assert.equal(
        (await a.client.call('POST', `/api/object/${MISSING}/tag`, { add: [own] })).status,
        'wrong-object',
      );
      assert.equal((await c.client.call('POST', url, { add: [cTag] })).status, 'wrong-object');
      assert.equal((await a.client.call('POST', url, { add: [cTag] })).status, 'wrong-tag');
      assert.equal((await a.client.call('POST', url, { add: [MISSING] })).status, 'wrong-tag');
      assert.equal((await a.client.call('POST', url, { add: [tagsA.tag_all] })).status, 'access-denied');
      assert.equal((await a.client.call('POST', url, { delete: [tagsA.tag_all] })).status, 'access-denied');
      assert.equal((await a.client.call('POST', url, { add: [tagsA.tag_trash] })).status, 'access-denied');
      assert.equal((await a.client.call('POST', url, { add: [own], delete: [own] })).status, 'wrong-syntax');
      assert.equal((await a.client.call('POST', url, { add: own })).status, 'wrong-syntax');
      assert.equal((await a.client.call('POST', url, { add: ['nope'] })).status, 'wrong-syntax');
      // A failing call changes nothing, also for the valid part of it.
      assert.equal((await a.client.call('POST', url, { add: [own, cTag] })).status, 'wrong-tag');
      assert.deepEqual(
        ((await a.client.call('GET', `/api/contact/${object}`)).contact as { tag: string[] }).tag,
        [tagsA.tag_all],
      );

      await a.client.call('POST', url, { add: [tagsA.share_read] });
      await newEvents(a.client);
      await newEvents(b.client);
      // Sharing back with the owner only needs read; sharing with c needs propagate.
      assert.equal((await b.client.call('POST', url, { add: [tagsB.share_read] })).status, 'ok');
      assert.equal((await b.client.call('POST', url, { delete: [tagsB.share_read] })).status, 'ok');
      await linkUsers(app, b.user.uuid, c.user.uuid);
      await newEvents(a.client);
      await newEvents(b.client);
      // b reads only: personal tags are fine, sharing further is not.
      assert.equal((await b.client.call('POST', url, { add: [tagsB.share_read] })).status, 'access-denied');
      assert.equal(
        (await b.client.call('POST', url, { delete: [tagsA.share_read] })).status,
        'access-denied',
      );
      const answer = await b.client.call('POST', url, { add: [tagsB.tag_unread] });
      assert.deepEqual(
        new Set(answer.tag as string[]),
        new Set([tagsA.share_read, tagsB.tag_shared, tagsB.tag_unread]),
      );
      assert.equal((await b.client.call('GET', `/api/contact/${object}`)).status, 'ok');
      assert.equal(
        (await b.client.call('POST', `/api/contact/${object}`, { firstname: 'X' })).status,
        'access-denied',
      );
      // Only b sees its personal tag change.
      assert.equal((await newEvents(b.client, 'object_tag')).length, 1);
      assert.deepEqual(await newEvents(a.client, 'object_tag'), []);
      // a's private tag: b is not told.
      await a.client.call('POST', url, { add: [own] });
      assert.equal((await newEvents(a.client, 'object_tag')).length, 1);
      assert.deepEqual(await newEvents(b.client, 'object_tag'), []);
      // a's share_write (b can read that tag): b is told, and can now write.
      await a.client.call('POST', url, { add: [tagsA.share_write] });
      const [upgrade] = await newEvents(b.client, 'object_tag');
      assert.deepEqual(upgrade?.tag_add, [tagsA.share_write]);
      assert.equal((await b.client.call('POST', `/api/contact/${object}`, { firstname: 'X' })).status, 'ok');
      // The owner may take any tag it can see off its object.
      await a.client.call('POST', url, { delete: [tagsA.share_read, tagsA.share_write] });
      const [gone] = await newEvents(b.client, 'object_unshare');
      assert.equal(gone?.object, object);
      // b's personal tags went with b's access.
      assert.deepEqual(
        ((await a.client.call('GET', `/api/contact/${object}`)).contact as { tag: string[] }).tag.sort(),
        [own, tagsA.tag_all].sort(),
      );
      assert.deepEqual((await b.client.call('GET', `/api/tag/${tagsB.tag_unread}/object`)).object, []);
    });

    test('propagate: a user with propagate shares further; losing it removes what was derived', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c, tagsA, tagsB } = await people(app);
      await linkUsers(app, b.user.uuid, c.user.uuid);
      const object = await contact(a.client);
      const url = `/api/object/${object}/tag`;
      await a.client.call('POST', url, { add: [tagsA.share_propagate] });
      await newEvents(c.client);
      assert.equal((await b.client.call('POST', url, { add: [tagsB.share_write] })).status, 'ok');
      const [share] = await newEvents(c.client, 'object_share');
      assert.equal(share?.object, object);
      assert.equal(share?.user, b.user.uuid);
      assert.equal((await c.client.call('POST', `/api/contact/${object}`, { firstname: 'C' })).status, 'ok');
      // c only writes: it cannot share further.
      const tagsC = await app.services.tags.getUserTags(c.user.uuid);
      assert.equal((await c.client.call('POST', url, { add: [tagsC.share_read] })).status, 'access-denied');

      // a takes b's propagate away: b and c lose access, b's share tag leaves the object.
      await newEvents(b.client);
      await a.client.call('POST', url, { delete: [tagsA.share_propagate] });
      for (const client of [b.client, c.client]) {
        const [lost] = await newEvents(client, 'object_unshare');
        assert.equal(lost?.object, object);
        assert.equal(lost?.user, a.user.uuid);
        assert.equal((await client.call('GET', `/api/contact/${object}`)).status, 'wrong-contact');
      }
      assert.deepEqual((await c.client.call('GET', `/api/tag/${tagsB.share_write}/object`)).object, []);
      assert.deepEqual(
        ((await a.client.call('GET', `/api/contact/${object}`)).contact as { tag: string[] }).tag,
        [tagsA.tag_all],
      );
    });

    test('foreign use: writers of a tag put it on their own objects, sharing them with the tag', async (t) => {
      const app = await build(t, { dialect });
      const { a, b } = await people(app);
      const folder = (
        await a.client.call('POST', '/api/tag', {
          label: 'Team',
          policy: { [b.user.uuid]: 2 },
          foreign_use: true,
        })
      ).uuid as string;
      const closed = (
        await a.client.call('POST', '/api/tag', { label: 'Closed', policy: { [b.user.uuid]: 2 } })
      ).uuid as string;
      const object = await contact(b.client);
      assert.equal(
        (await b.client.call('POST', `/api/object/${object}/tag`, { add: [closed] })).status,
        'access-denied',
      );
      await newEvents(a.client);
      assert.equal(
        (await b.client.call('POST', `/api/object/${object}/tag`, { add: [folder] })).status,
        'ok',
      );
      assert.equal((await newEvents(a.client, 'object_share')).length, 1);
      assert.equal((await a.client.call('POST', `/api/contact/${object}`, { firstname: 'A' })).status, 'ok');
      const listed = (await a.client.call('GET', `/api/tag/${folder}/object?type=contact`)).object as {
        uuid: string;
      }[];
      assert.deepEqual(
        listed.map((o) => o.uuid),
        [object],
      );
      // Closing the tag to foreign use takes b's object out of it again.
      await a.client.call('POST', `/api/tag/${folder}`, { foreign_use: false });
      assert.equal((await newEvents(a.client, 'object_unshare')).length, 1);
      assert.equal((await a.client.call('GET', `/api/contact/${object}`)).status, 'wrong-contact');
    });

    test('a user creates at most 1000 tags (quota-exceeded)', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const existing = Number(
        (
          await app.services.store.db
            .selectFrom('tag')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('owner', '=', user.uuid)
            .where('kind', '=', 'custom')
            .executeTakeFirstOrThrow()
        ).n,
      );
      const rows = Array.from({ length: 999 - existing }, (_, i) => ({
        uuid: `6f1c1a40-0000-1000-8000-${String(i).padStart(12, '0')}`,
        owner: user.uuid,
        kind: 'custom' as const,
        name: null,
        label: `t${i}`,
        foreign_use: 0,
        time: 0,
        sort_key: String(i).padStart(12, '0'),
      }));
      for (let i = 0; i < rows.length; i += 200)
        await app.services.store.db
          .insertInto('tag')
          .values(rows.slice(i, i + 200))
          .execute();
      const last = await client.call('POST', '/api/tag', { label: 'last' });
      assert.equal(last.status, 'ok', last.message);
      assert.equal((await client.call('POST', '/api/tag', { label: 'over' })).status, 'quota-exceeded');
      // Chats make tags of their own, which do not count.
      assert.equal((await client.call('POST', '/api/chat', {})).status, 'ok');
    });
  });
}
