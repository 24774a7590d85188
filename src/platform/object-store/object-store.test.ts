import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { build, type Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import type { App } from '../../app.js';
import { ApiError } from '../errors.js';
import { Level, type ObjectTypeDefinition } from './index.js';

interface Ev {
  id: number;
  event: string;
  [field: string]: unknown;
}

async function events(client: Client): Promise<Ev[]> {
  return (await client.call('GET', '/api/event?next=0&timeout=0')).event as Ev[];
}

// Test-only types borrow the statuses of spec resources this code does not store yet.
function note(app: App): ObjectTypeDefinition {
  return app.services.store.defineType({ type: 'note', wrong: 'wrong-box' });
}

async function createNote(app: App, owner: string, description = 'n', data: unknown = { text: 'x' }) {
  const { store } = app.services;
  return store.write((w) => store.createObject(w, { type: 'note', owner, description, data }));
}

async function rejects(promise: Promise<unknown>, status: string) {
  await assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.status === status);
}

async function link(app: App, a: string, b: string) {
  const { store } = app.services;
  await store.write((w) => store.linkUsers(w, a, b));
}

for (const dialect of DIALECTS) {
  describe(`object store core (${dialect})`, () => {
    test('every new user owns system and share tags', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const tags = await app.services.tags.getUserTags(user.uuid);
      assert.deepEqual(Object.keys(tags).sort(), [
        'share_propagate',
        'share_read',
        'share_write',
        'tag_all',
        'tag_inbox',
        'tag_outbox',
        'tag_shared',
        'tag_trash',
        'tag_unread',
      ]);
      const listed = (await client.call('GET', '/api/tag')).tag as Record<
        string,
        { kind: string; label: string }
      >;
      assert.equal(listed[tags.tag_all]?.kind, 'system');
      assert.equal(listed[tags.share_write]?.kind, 'share');
      assert.equal(listed[tags.tag_trash]?.label, 'tag_trash');
    });

    test('create: object_new to the owner, tag_all on it; strangers get wrong-<type>, readers access-denied on write', async (t) => {
      const app = await build(t, { dialect });
      const def = note(app);
      const { client, user } = await loggedInClient(app);
      const { user: other } = await loggedInClient(app);
      const row = await createNote(app, user.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      const [created] = (await events(client)).filter((e) => e.event === 'object_new');
      assert.deepEqual(
        { ...created, id: 0, time: 0 },
        {
          id: 0,
          time: 0,
          event: 'object_new',
          object: row.uuid,
          type: 'note',
          owner: user.uuid,
          description: 'n',
          tag: [tags.tag_all],
        },
      );
      const { store } = app.services;
      assert.equal((await store.getForRead(store.db, user.uuid, row.uuid, def)).level, Level.owner);
      await rejects(store.getForRead(store.db, other.uuid, row.uuid, def), 'wrong-box');
      await rejects(store.getForWrite(store.db, other.uuid, row.uuid, def), 'wrong-box');
      // A known uuid of another type is as unknown as a missing one.
      await rejects(
        store.getForRead(store.db, user.uuid, row.uuid, { type: 'other', wrong: 'wrong-ipquality' }),
        'wrong-ipquality',
      );
      await link(app, user.uuid, other.uuid);
      await store.write((w) => store.addOwnerTags(w, row, [tags.share_read]));
      assert.equal((await store.getForRead(store.db, other.uuid, row.uuid, def)).level, Level.read);
      await rejects(store.getForWrite(store.db, other.uuid, row.uuid, def), 'access-denied');
    });

    test('create without further tags: object_new to the owner alone, as its tags derive, even when tag_all names others', async (t) => {
      const app = await build(t, { dialect });
      note(app);
      const { store } = app.services;
      const a = await loggedInClient(app);
      const b = await loggedInClient(app);
      await link(app, a.user.uuid, b.user.uuid);
      const tags = await app.services.tags.getUserTags(a.user.uuid);
      // tag_all naming b: it grants nothing (grants.ts derive), which createObject relies on to
      // name the readers without reading the new object's tags.
      const { row: tagAll } = await store.getTagForRead(store.db, a.user.uuid, tags.tag_all);
      await store.write((w) => store.updateTag(w, a.user.uuid, tagAll, { policy: { [b.user.uuid]: 2 } }));
      const row = await createNote(app, a.user.uuid);
      const toA = (await events(a.client)).filter((e) => e.event === 'object_new');
      assert.deepEqual(
        toA.map((e) => [e.object, e.tag]),
        [[row.uuid, [tags.tag_all]]],
      );
      // What the read the create skips would have answered: the owner alone, seeing tag_all.
      assert.deepEqual([...(await store.levelsOf(store.db, row))], [[a.user.uuid, Level.owner]]);
      const visible = await store.visibleTags(store.db, [row.uuid], [a.user.uuid]);
      assert.deepEqual(visible(a.user.uuid, row.uuid), [tags.tag_all]);
      assert.equal((await events(b.client)).filter((e) => e.event === 'object_new').length, 0);
      // A further tag that shares it: the readers come from its tags, b is one of them.
      const shared = await store.write((w) =>
        store.createObject(w, { type: 'note', owner: a.user.uuid, tags: [tags.share_read] }),
      );
      const toB = (await events(b.client)).filter((e) => e.event === 'object_new');
      assert.deepEqual(
        toB.map((e) => e.object),
        [shared.uuid],
      );
    });

    test('listing a tag: newest first, paging with start and count, type filter, strangers get wrong-tag', async (t) => {
      const app = await build(t, { dialect });
      note(app);
      const { client, user } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const uuids: string[] = [];
      for (let i = 0; i < 5; i++) uuids.push((await createNote(app, user.uuid, `n${i}`)).uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      const base = `/api/tag/${tags.tag_all}/object`;
      const page1 = (await client.call('GET', `${base}?order=desc&count=2&type=note`)).object as {
        uuid: string;
      }[];
      assert.deepEqual(
        page1.map((o) => o.uuid),
        [uuids[4], uuids[3]],
      );
      const page2 = (await client.call('GET', `${base}?order=desc&count=2&start=${uuids[3]}`)).object as {
        uuid: string;
      }[];
      assert.deepEqual(
        page2.map((o) => o.uuid),
        [uuids[2], uuids[1]],
      );
      const asc = (await client.call('GET', `${base}?type=note`)).object as { uuid: string; tag: string[] }[];
      assert.deepEqual(
        asc.map((o) => o.uuid),
        uuids,
      );
      assert.deepEqual(asc[0]!.tag, [tags.tag_all]);
      assert.deepEqual((await client.call('GET', `${base}?type=fax`)).object, []);
      assert.equal((await stranger.call('GET', base)).status, 'wrong-tag');
      assert.equal((await client.call('GET', `${base}?count=0`)).status, 'wrong-syntax');
      assert.equal((await client.call('GET', `${base}?count=1001`)).status, 'wrong-syntax');
      assert.equal((await client.call('GET', `${base}?type=Bad!`)).status, 'wrong-syntax');
      assert.equal((await client.call('GET', `${base}?from=10&to=5`)).status, 'wrong-syntax');
      const now = Math.floor(Date.now() / 1000);
      assert.equal(((await client.call('GET', `${base}?from=${now + 100}`)).object as unknown[]).length, 0);
      assert.equal(
        ((await client.call('GET', `${base}?type=note&to=${now + 100}`)).object as unknown[]).length,
        5,
      );
    });

    test('trash: delete moves to the trash, readers lose access, purge removes the rows', async (t) => {
      const app = await build(t, { dialect });
      const def = note(app);
      const { client, user } = await loggedInClient(app);
      const { client: otherClient, user: other } = await loggedInClient(app);
      const { store } = app.services;
      await link(app, user.uuid, other.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      const row = await createNote(app, user.uuid);
      await store.write((w) => store.addOwnerTags(w, row, [tags.share_write]));

      // The writer moves it to the owner's trash; only the owner sees it there.
      const found = await store.getForWrite(store.db, other.uuid, row.uuid, def);
      await rejects(
        store.write((w) => store.deleteObject(w, other.uuid, found, true)),
        'access-denied',
      );
      await store.write((w) => store.deleteObject(w, other.uuid, found, false));
      for (const c of [client, otherClient]) {
        const deleted = (await events(c)).filter((e) => e.event === 'object_delete');
        assert.equal(deleted.length, 1);
        assert.equal(deleted[0]!.user, other.uuid);
        assert.equal(deleted[0]!.purge, undefined);
      }
      await rejects(store.getForRead(store.db, other.uuid, row.uuid, def), 'wrong-box');
      const trash = (await client.call('GET', `/api/tag/${tags.tag_trash}/object`)).object as {
        uuid: string;
      }[];
      assert.deepEqual(
        trash.map((o) => o.uuid),
        [row.uuid],
      );
      const shared = (await otherClient.call('GET', `/api/tag/${tags.share_write}/object`))
        .object as unknown[];
      assert.equal(shared.length, 0);

      // Restoring is taking the trash tag off: the writer gets it back (object_share).
      const answer = await client.call('POST', `/api/object/${row.uuid}/tag`, { delete: [tags.tag_trash] });
      assert.equal(answer.status, 'ok');
      assert.equal((await store.getForRead(store.db, other.uuid, row.uuid, def)).level, Level.write);
      assert.equal((await events(otherClient)).filter((e) => e.event === 'object_share').length, 2);

      // DELETE /api/trash purges everything in the trash.
      const owned = await store.getForWrite(store.db, user.uuid, row.uuid, def);
      await store.write((w) => store.deleteObject(w, user.uuid, owned, false));
      assert.equal((await client.call('DELETE', '/api/trash')).status, 'ok');
      assert.ok((await events(client)).some((e) => e.event === 'trash_purge'));
      for (const table of ['object', 'object_tag']) {
        const column = table === 'object' ? 'uuid' : 'object';
        const left = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(
          column,
        )} = ${row.uuid}`.execute(store.db);
        assert.equal(Number(left.rows[0]!.n), 0, table);
      }
      await rejects(store.getForRead(store.db, user.uuid, row.uuid, def), 'wrong-box');
    });

    test('purge by the owner: object_delete with purge to everyone who could read it', async (t) => {
      const app = await build(t, { dialect });
      const def = note(app);
      const { client, user } = await loggedInClient(app);
      const { client: otherClient, user: other } = await loggedInClient(app);
      const { store } = app.services;
      await link(app, user.uuid, other.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      const row = await createNote(app, user.uuid);
      await store.write((w) => store.addOwnerTags(w, row, [tags.share_read]));
      const found = await store.getForWrite(store.db, user.uuid, row.uuid, def);
      await store.write((w) => store.deleteObject(w, user.uuid, found, true));
      for (const c of [client, otherClient]) {
        const deleted = (await events(c)).filter((e) => e.event === 'object_delete');
        assert.equal(deleted[0]!.purge, true);
      }
      assert.equal(await store.accessLevel(store.db, user.uuid, row.uuid), 0);
    });

    test("purge runs the type's hook in the transaction and its later work after the commit", async (t) => {
      const app = await build(t, { dialect });
      const { store } = app.services;
      const calls: string[] = [];
      const def = store.defineType({
        type: 'note',
        wrong: 'wrong-box',
        onPurge: async (w, row) => {
          const inside = await w.trx
            .selectFrom('object')
            .select('uuid')
            .where('uuid', '=', row.uuid)
            .executeTakeFirst();
          calls.push(`hook ${inside ? 'sees the row' : 'too late'}`);
          w.afterCommit(async () => {
            calls.push(
              `later ${(await store.accessLevel(store.db, row.owner, row.uuid)) === 0 ? 'after' : 'before'}`,
            );
          });
        },
      });
      const { user } = await loggedInClient(app);
      const row = await createNote(app, user.uuid);
      const found = await store.getForWrite(store.db, user.uuid, row.uuid, def);
      await store.write((w) => store.deleteObject(w, user.uuid, found, true));
      assert.deepEqual(calls, ['hook sees the row', 'later after']);
    });

    test("a user's system tags are kept only once the write that read them commits", async (t) => {
      const app = await build(t, { dialect });
      const { store, users } = app.services;
      const uuid = '6f1c1a40-1111-1000-8000-000000000001';
      const input = { uuid, username: 'kept', password: 'a-long-password', firstname: 'K', lastname: 'T' };
      // The account's own contact reads the new tags inside the write, which then rolls back.
      await assert.rejects(
        store.write(async (w) => {
          await users.createUserIn(w, input);
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      // Made again with the same UUID: new tags. Tags kept from the rolled-back write would be
      // put on its objects and fail their foreign key.
      await users.createUser(input);
      const row = await createNote(app, uuid);
      const tags = await app.services.tags.getUserTags(uuid);
      assert.deepEqual(await store.userTags(store.db, uuid), tags);
      const visible = await store.visibleTags(store.db, [row.uuid], [uuid]);
      assert.deepEqual(visible(uuid, row.uuid), [tags.tag_all]);
    });

    test('volume is accounted per owner and enforced against the quota', async (t) => {
      const app = await build(t, { dialect });
      note(app);
      const { user } = await loggedInClient(app);
      const { store } = app.services;
      // The user's own contact takes a little already.
      const base = await store.usedVolume(user.uuid);
      const row = await createNote(app, user.uuid, 'abc', { text: 'hello' });
      assert.equal(await store.usedVolume(user.uuid), base + 3 + JSON.stringify({ text: 'hello' }).length);
      await store.write((w) => store.updateObject(w, row, { contentBytes: 1000 }, user.uuid));
      assert.equal(await store.usedVolume(user.uuid), base + 3 + 16 + 1000);
      // The default pack allows 100 MB.
      await rejects(
        store.write((w) => store.updateObject(w, row, { contentBytes: 101 * 1024 * 1024 }, user.uuid)),
        'quota-exceeded',
      );
      assert.equal(await store.usedVolume(user.uuid), base + 3 + 16 + 1000);
    });
  });
}
