import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { build, type Client as ClientType, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';

const MISSING = '6f1c1a40-0000-1000-8000-000000000000';

async function contact(client: ClientType, firstname = 'C'): Promise<string> {
  return (await client.call('POST', '/api/contact', { firstname, lastname: 'L' })).uuid as string;
}

/** a owns an object shared read-only with b; c is a stranger. */
async function setup(app: App) {
  const a = await loggedInClient(app);
  const b = await loggedInClient(app);
  const c = await loggedInClient(app);
  await linkUsers(app, a.user.uuid, b.user.uuid);
  const tagsA = await app.services.tags.getUserTags(a.user.uuid);
  const object = await contact(a.client);
  await a.client.call('POST', `/api/object/${object}/tag`, { add: [tagsA.share_read] });
  for (const client of [a.client, b.client, c.client]) await newEvents(client);
  return { a, b, c, tagsA, object };
}

async function rows(app: App, table: string, column: string, value: string): Promise<number> {
  const result = await sql<{
    n: number | string;
  }>`SELECT COUNT(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${value}`.execute(
    app.services.store.db,
  );
  return Number(result.rows[0]!.n);
}

for (const dialect of DIALECTS) {
  describe(`comments (${dialect})`, () => {
    test('read access suffices to comment; comment_new to the readers; paging', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c, object } = await setup(app);
      const url = `/api/object/${object}/comment`;
      const first = await b.client.call('POST', url, { text: 'Looks good\nto me' });
      assert.equal(first.status, 'ok');
      const expected = {
        event: 'comment_new',
        comment: first.uuid,
        owner: b.user.uuid,
        text: 'Looks good\nto me',
        object: { object, type: 'contact', owner: a.user.uuid, description: 'C L' },
      };
      for (const client of [a.client, b.client]) {
        const [event] = await newEvents(client, 'comment_new');
        assert.deepEqual({ ...event, id: 0, time: 0 }, { id: 0, time: 0, ...expected });
      }
      assert.deepEqual(await newEvents(c.client), []);
      const second = (await a.client.call('POST', url, { text: 'x'.repeat(1000) })).uuid;
      const third = (await a.client.call('POST', url, { text: 'third' })).uuid;
      const all = (await b.client.call('GET', url)).comment as {
        uuid: string;
        owner: string;
        text: string;
      }[];
      assert.deepEqual(
        all.map((comment) => comment.uuid),
        [first.uuid, second, third],
      );
      assert.equal(all[0]!.owner, b.user.uuid);
      const page = (await a.client.call('GET', `${url}?order=desc&count=1&start=${third}`)).comment as {
        uuid: string;
      }[];
      assert.deepEqual(
        page.map((comment) => comment.uuid),
        [second],
      );

      for (const [body, status] of [
        [{}, 'missing-element'],
        [{ text: '' }, 'wrong-syntax'],
        [{ text: 'x'.repeat(1001) }, 'wrong-syntax'],
        [{ text: 5 }, 'wrong-syntax'],
      ] as const) {
        assert.equal((await a.client.call('POST', url, body)).status, status, JSON.stringify(body));
      }
      assert.equal((await c.client.call('POST', url, { text: 'hi' })).status, 'wrong-object');
      assert.equal((await c.client.call('GET', url)).status, 'wrong-object');
      assert.equal(
        (await a.client.call('POST', `/api/object/${MISSING}/comment`, { text: 'hi' })).status,
        'wrong-object',
      );
      assert.equal((await a.client.call('GET', `${url}?count=1001`)).status, 'wrong-syntax');
      assert.equal(((await a.client.call('GET', url)).comment as unknown[]).length, 3);
    });

    test('edit by the comment owner only; delete by the comment or object owner; strangers get wrong-comment', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c, tagsA, object } = await setup(app);
      const url = `/api/object/${object}/comment`;
      const mine = (await a.client.call('POST', url, { text: 'by a' })).uuid as string;
      const theirs = (await b.client.call('POST', url, { text: 'by b' })).uuid as string;
      await newEvents(a.client);
      await newEvents(b.client);

      assert.equal(
        (await b.client.call('POST', `/api/comment/${mine}`, { text: 'x' })).status,
        'access-denied',
      );
      assert.equal(
        (await c.client.call('POST', `/api/comment/${mine}`, { text: 'x' })).status,
        'wrong-comment',
      );
      assert.equal(
        (await a.client.call('POST', `/api/comment/${MISSING}`, { text: 'x' })).status,
        'wrong-comment',
      );
      assert.equal(
        (await a.client.call('POST', `/api/comment/${mine}`, { text: '' })).status,
        'wrong-syntax',
      );
      assert.equal((await a.client.call('POST', `/api/comment/${mine}`, {})).status, 'missing-element');
      assert.equal((await a.client.call('POST', `/api/comment/${mine}`, { text: 'edited' })).status, 'ok');
      for (const client of [a.client, b.client]) {
        const [event] = await newEvents(client, 'comment_modify');
        assert.equal(event?.comment, mine);
        assert.equal(event?.text, 'edited');
        assert.equal(event?.owner, a.user.uuid);
      }
      const texts = ((await a.client.call('GET', url)).comment as { text: string }[]).map(
        (comment) => comment.text,
      );
      assert.deepEqual(texts, ['edited', 'by b']);

      assert.equal((await b.client.call('DELETE', `/api/comment/${mine}`)).status, 'access-denied');
      assert.equal((await c.client.call('DELETE', `/api/comment/${theirs}`)).status, 'wrong-comment');
      // The object's owner removes b's comment.
      assert.equal((await a.client.call('DELETE', `/api/comment/${theirs}`)).status, 'ok');
      const [deleted] = await newEvents(b.client, 'comment_delete');
      assert.deepEqual(
        { ...deleted, id: 0, time: 0 },
        {
          id: 0,
          time: 0,
          event: 'comment_delete',
          comment: theirs,
          owner: b.user.uuid,
          object: { object, type: 'contact', owner: a.user.uuid, description: 'C L' },
        },
      );
      assert.equal((await a.client.call('DELETE', `/api/comment/${theirs}`)).status, 'wrong-comment');

      // Once b loses access, its comments are unknown to it.
      const again = (await b.client.call('POST', url, { text: 'again' })).uuid as string;
      await a.client.call('POST', `/api/object/${object}/tag`, { delete: [tagsA.share_read] });
      assert.equal(
        (await b.client.call('POST', `/api/comment/${again}`, { text: 'x' })).status,
        'wrong-comment',
      );
      assert.equal((await b.client.call('DELETE', `/api/comment/${again}`)).status, 'wrong-comment');

      // Purging the object removes its comments.
      assert.equal(await rows(app, 'comment', 'object', object), 2);
      await a.client.call('DELETE', `/api/contact/${object}?purge`);
      assert.equal(await rows(app, 'comment', 'object', object), 0);
    });
  });

  describe(`links (${dialect})`, () => {
    test('links need write on both; listed from both sides, only readable ones; events to readers of both', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c, tagsA, object } = await setup(app);
      const second = await contact(a.client, 'Second');
      const third = await contact(a.client, 'Third');
      await newEvents(a.client);
      assert.equal((await a.client.call('POST', `/api/object/${object}/link/${second}`, {})).status, 'ok');
      assert.equal((await a.client.call('POST', `/api/object/${object}/link/${third}`)).status, 'ok');
      const [event] = await newEvents(a.client, 'object_link_new');
      assert.deepEqual(
        { ...event, id: 0, time: 0 },
        {
          id: 0,
          time: 0,
          event: 'object_link_new',
          object,
          link: second,
          type: 'contact',
          user: a.user.uuid,
        },
      );
      // b reads `object` only: it is not told about links to objects it cannot read.
      assert.deepEqual(await newEvents(b.client, 'object_link_new'), []);
      assert.deepEqual((await a.client.call('GET', `/api/object/${object}/link`)).link, {
        [second]: { type: 'contact' },
        [third]: { type: 'contact' },
      });
      assert.deepEqual((await a.client.call('GET', `/api/object/${second}/link`)).link, {
        [object]: { type: 'contact' },
      });
      assert.deepEqual((await b.client.call('GET', `/api/object/${object}/link`)).link, {});
      await a.client.call('POST', `/api/object/${second}/tag`, { add: [tagsA.share_write] });
      assert.deepEqual((await b.client.call('GET', `/api/object/${object}/link`)).link, {
        [second]: { type: 'contact' },
      });

      // b has read on `object`, write on `second`.
      const own = await contact(b.client, 'B');
      assert.equal(
        (await b.client.call('POST', `/api/object/${object}/link/${own}`)).status,
        'access-denied',
      );
      assert.equal(
        (await b.client.call('POST', `/api/object/${own}/link/${object}`)).status,
        'access-denied',
      );
      assert.equal((await b.client.call('POST', `/api/object/${second}/link/${own}`)).status, 'ok');
      assert.equal((await b.client.call('POST', `/api/object/${own}/link/${third}`)).status, 'wrong-object');
      assert.equal(
        (await c.client.call('POST', `/api/object/${object}/link/${second}`)).status,
        'wrong-object',
      );
      assert.equal((await c.client.call('GET', `/api/object/${object}/link`)).status, 'wrong-object');
      assert.equal(
        (await a.client.call('POST', `/api/object/${object}/link/${object}`)).status,
        'wrong-object',
      );
      assert.equal(
        (await a.client.call('POST', `/api/object/${object}/link/${MISSING}`)).status,
        'wrong-object',
      );
      assert.equal((await a.client.call('POST', `/api/object/${object}/link/nope`)).status, 'wrong-syntax');

      // Delete: write on the first object; the link must exist.
      assert.equal(
        (await b.client.call('DELETE', `/api/object/${object}/link/${second}`)).status,
        'access-denied',
      );
      assert.equal(
        (await c.client.call('DELETE', `/api/object/${object}/link/${second}`)).status,
        'wrong-object',
      );
      assert.equal(
        (await a.client.call('DELETE', `/api/object/${own}/link/${third}`)).status,
        'wrong-object',
      );
      await newEvents(a.client);
      await newEvents(b.client);
      assert.equal((await b.client.call('DELETE', `/api/object/${second}/link/${object}`)).status, 'ok');
      for (const client of [a.client, b.client]) {
        const [removed] = await newEvents(client, 'object_link_delete');
        assert.equal(removed?.user, b.user.uuid);
      }
      assert.equal(
        (await a.client.call('DELETE', `/api/object/${second}/link/${object}`)).status,
        'wrong-object',
      );
      assert.deepEqual((await a.client.call('GET', `/api/object/${object}/link`)).link, {
        [third]: { type: 'contact' },
      });
      // Purging an object removes its links.
      await a.client.call('DELETE', `/api/contact/${third}?purge`);
      assert.deepEqual((await a.client.call('GET', `/api/object/${object}/link`)).link, {});
    });
  });

  describe(`metadata (${dialect})`, () => {
    test('object metadata: update, delete, keys, domain; object_metadata to readers; noevent, nostore', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c, object } = await setup(app);
      const url = `/api/object/${object}/metadata`;
      const update = {
        'com.example.color': 'red',
        'com.example.size': { w: 1, h: 2 },
        'com.example.deep.flag': true,
        'org.other.list': [1, null, 'x'],
        'com.example': 5,
      };
      assert.equal((await a.client.call('POST', url, { update })).status, 'ok');
      for (const client of [a.client, b.client]) {
        const [event] = await newEvents(client, 'object_metadata');
        assert.deepEqual(
          { ...event, id: 0, time: 0 },
          { id: 0, time: 0, event: 'object_metadata', object, user: a.user.uuid, update, delete: [] },
        );
      }
      assert.deepEqual(await newEvents(c.client), []);
      assert.deepEqual((await b.client.call('GET', url)).metadata, update);
      assert.deepEqual(
        (await b.client.call('GET', `${url}?keys=com.example.color,org.other.list`)).metadata,
        {
          'com.example.color': 'red',
          'org.other.list': [1, null, 'x'],
        },
      );
      assert.deepEqual((await b.client.call('GET', `${url}?domain=com.example`)).metadata, {
        'com.example.color': 'red',
        'com.example.size': { w: 1, h: 2 },
        'com.example.deep.flag': true,
      });
      assert.deepEqual((await b.client.call('GET', `${url}?domain=org`)).metadata, {
        'org.other.list': [1, null, 'x'],
      });
      assert.deepEqual(Object.keys((await b.client.call('GET', `${url}?domain=net`)).metadata as object), []);

      assert.equal(
        (await a.client.call('POST', url, { delete: ['com.example.color', 'no.such.key'] })).status,
        'ok',
      );
      const [deleted] = await newEvents(b.client, 'object_metadata');
      assert.deepEqual(deleted?.delete, ['com.example.color', 'no.such.key']);
      assert.equal(
        ((await a.client.call('GET', url)).metadata as Record<string, unknown>)['com.example.color'],
        undefined,
      );

      assert.equal((await a.client.call('POST', `${url}?noevent`, { update: { 'a1.b1': 1 } })).status, 'ok');
      assert.deepEqual(await newEvents(b.client, 'object_metadata'), []);
      assert.equal(((await a.client.call('GET', url)).metadata as Record<string, unknown>)['a1.b1'], 1);
      assert.equal((await a.client.call('POST', `${url}?nostore`, { update: { 'a1.b1': 2 } })).status, 'ok');
      const [onlyEvent] = await newEvents(b.client, 'object_metadata');
      assert.deepEqual(onlyEvent?.update, { 'a1.b1': 2 });
      assert.equal(((await a.client.call('GET', url)).metadata as Record<string, unknown>)['a1.b1'], 1);
    });

    test('object metadata: limits, key formats, access', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c, object } = await setup(app);
      const url = `/api/object/${object}/metadata`;
      // 100 KB of JSON text is the most a value may take.
      const largest = 'x'.repeat(100 * 1024 - 2);
      assert.equal((await a.client.call('POST', url, { update: { 'big.value': largest } })).status, 'ok');
      const before = JSON.stringify((await a.client.call('GET', url)).metadata);
      await newEvents(b.client);
      const cases: [string, unknown, string][] = [
        [url, { update: { 'ok.key': 1, 'big.value': `${largest}x` } }, 'too-large'],
        [url, { update: { 'big.value': { list: [largest] } } }, 'too-large'],
        [url, { update: { nodots: 1 } }, 'wrong-syntax'],
        [url, { update: { 'Upper.case': 1 } }, 'wrong-syntax'],
        [url, { update: { 'a.bc': 1 } }, 'wrong-syntax'],
        [url, { update: { [`${'a'.repeat(51)}.bc`]: 1 } }, 'wrong-syntax'],
        [url, { update: { [Array.from({ length: 12 }, () => 'ab').join('.')]: 1 } }, 'wrong-syntax'],
        [url, { delete: ['bad key'] }, 'wrong-syntax'],
        [url, { delete: 'ab.cd' }, 'wrong-syntax'],
        [url, { update: [] }, 'wrong-syntax'],
        [url, { update: { 'ab.cd': 1 }, delete: ['ab.cd'] }, 'wrong-syntax'],
        [`/api/object/${MISSING}/metadata`, { update: { 'ab.cd': 1 } }, 'wrong-object'],
      ];
      for (const [target, body, status] of cases) {
        assert.equal(
          (await a.client.call('POST', target, body)).status,
          status,
          JSON.stringify(body).slice(0, 80),
        );
      }
      assert.equal(JSON.stringify((await a.client.call('GET', url)).metadata), before);
      assert.deepEqual(await newEvents(b.client), []);
      assert.equal((await b.client.call('POST', url, { update: { 'ab.cd': 1 } })).status, 'access-denied');
      assert.equal((await c.client.call('POST', url, { update: { 'ab.cd': 1 } })).status, 'wrong-object');
      assert.equal((await c.client.call('GET', url)).status, 'wrong-object');
      assert.equal((await a.client.call('GET', `${url}?keys=bad`)).status, 'wrong-syntax');
      assert.equal((await a.client.call('GET', `${url}?domain=a`)).status, 'wrong-syntax');
      assert.equal((await a.client.call('GET', `${url}?domain=com.`)).status, 'wrong-syntax');
      // Purging the object removes its metadata.
      await a.client.call('DELETE', `/api/contact/${object}?purge`);
      assert.equal(await rows(app, 'object_metadata', 'object', object), 0);
    });
  });

  describe(`trash (${dialect})`, () => {
    test('DELETE /api/trash purges only the caller’s trash; shared listings hide trashed objects', async (t) => {
      const app = await build(t, { dialect });
      const a = await loggedInClient(app);
      const b = await loggedInClient(app);
      await linkUsers(app, a.user.uuid, b.user.uuid);
      const tagsA = await app.services.tags.getUserTags(a.user.uuid);
      const mine = await contact(a.client);
      const theirs = await contact(b.client);
      await a.client.call('POST', `/api/object/${mine}/tag`, { add: [tagsA.share_read] });
      await a.client.call('DELETE', `/api/contact/${mine}`);
      await b.client.call('DELETE', `/api/contact/${theirs}`);
      assert.deepEqual((await b.client.call('GET', `/api/tag/${tagsA.share_read}/object`)).object, []);
      assert.equal(
        ((await a.client.call('GET', `/api/tag/${tagsA.share_read}/object`)).object as unknown[]).length,
        1,
      );
      await newEvents(a.client);
      await newEvents(b.client);
      assert.equal((await a.client.call('DELETE', '/api/trash')).status, 'ok');
      assert.equal((await newEvents(a.client, 'trash_purge')).length, 1);
      assert.deepEqual(await newEvents(b.client), []);
      assert.equal((await a.client.call('GET', `/api/contact/${mine}`)).status, 'wrong-contact');
      assert.equal((await b.client.call('GET', `/api/contact/${theirs}`)).status, 'ok');
      assert.deepEqual((await a.client.call('GET', `/api/tag/${tagsA.tag_trash}/object`)).object, []);
    });
  });

  describe(`volume quota of metadata and comments (${dialect})`, () => {
    /** JSON text of a value of `n` bytes' worth of x (the quotes add 2). */
    const big = (n: number) => 'x'.repeat(n);
    const entryBytes = (key: string, value: string) => key.length + JSON.stringify(value).length;

    test("object metadata and comments count against the owner's volume quota", async (t) => {
      const app = await build(t, { dialect });
      const { a, b, object } = await setup(app);
      const { features, store } = app.services;
      await features.createPack('tiny', { quota: { volume: 1 } });
      await features.unassignPack(a.user.uuid, 'default');
      await features.assignPack(a.user.uuid, 'tiny');
      const url = `/api/object/${object}/metadata?noevent`;
      const base = await store.usedVolume(a.user.uuid);
      let expected = base;
      for (let i = 0; i < 10; i++) {
        const answer = await a.client.call('POST', url, { update: { [`app.k${i}`]: big(99_000) } });
        assert.equal(answer.status, 'ok', answer.message);
        expected += entryBytes(`app.k${i}`, big(99_000));
        assert.equal(await store.usedVolume(a.user.uuid), expected);
      }
      const feature = (await a.client.call('GET', '/api/user')).user as {
        feature: { used: { volume: number } };
      };
      assert.equal(feature.feature.used.volume, Math.ceil(expected / 10485.76) / 100);
      assert.ok(feature.feature.used.volume >= 0.94);

      // Beyond the quota: quota-exceeded and nothing changes.
      const over = await a.client.call('POST', url, {
        update: { 'app.k10': big(99_000), 'app.k11': 1 },
      });
      assert.equal(over.status, 'quota-exceeded');
      const stored = (await a.client.call('GET', `/api/object/${object}/metadata`)).metadata as Record<
        string,
        unknown
      >;
      assert.deepEqual(Object.keys(stored).sort(), Array.from({ length: 10 }, (_, i) => `app.k${i}`).sort());
      assert.equal(await store.usedVolume(a.user.uuid), expected);
      // Up to 500 bytes below the quota; a reader's comment counts against the owner, too.
      const fill = big(1024 * 1024 - expected - entryBytes('app.fill', '') - 500);
      assert.equal((await a.client.call('POST', url, { update: { 'app.fill': fill } })).status, 'ok');
      expected += entryBytes('app.fill', fill);
      const comment = await b.client.call('POST', `/api/object/${object}/comment`, { text: big(1000) });
      assert.equal(comment.status, 'quota-exceeded');
      assert.equal(await rows(app, 'comment', 'object', object), 0);

      // Overwriting a key counts the difference; deleting frees.
      assert.equal(
        (await a.client.call('POST', url, { update: { 'app.k0': 1 }, delete: ['app.k1'] })).status,
        'ok',
      );
      expected -= entryBytes('app.k0', big(99_000)) - 'app.k0'.length - 1 + entryBytes('app.k1', big(99_000));
      assert.equal(await store.usedVolume(a.user.uuid), expected);
      const uuid = (await b.client.call('POST', `/api/object/${object}/comment`, { text: 'ü'.repeat(1000) }))
        .uuid;
      assert.equal(await store.usedVolume(a.user.uuid), expected + 2000);
      assert.equal((await b.client.call('POST', `/api/comment/${uuid}`, { text: 'short' })).status, 'ok');
      assert.equal(await store.usedVolume(a.user.uuid), expected + 5);
      assert.equal((await a.client.call('DELETE', `/api/comment/${uuid}`)).status, 'ok');
      assert.equal(await store.usedVolume(a.user.uuid), expected);
      // nostore stores nothing and counts nothing.
      await a.client.call('POST', `/api/object/${object}/metadata?nostore`, { update: { 'app.k9': 2 } });
      assert.equal(await store.usedVolume(a.user.uuid), expected);

      // Purging the object frees what is stored with it.
      assert.equal((await a.client.call('DELETE', `/api/contact/${object}?purge`)).status, 'ok');
      assert.ok((await store.usedVolume(a.user.uuid)) < base);
    });

    test("a user's own metadata takes at most 1 MB in all", async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const url = '/api/user/metadata?noevent';
      for (let i = 0; i < 10; i++)
        assert.equal(
          (await client.call('POST', url, { update: { [`app.k${i}`]: big(100_000) } })).status,
          'ok',
        );
      const over = await client.call('POST', url, { update: { 'app.k10': big(100_000) } });
      assert.equal(over.status, 'quota-exceeded');
      const stored = (await client.call('GET', '/api/user/metadata')).metadata as Record<string, unknown>;
      assert.deepEqual(Object.keys(stored).length, 10);
      // Replacing within the bound is fine.
      const swap = await client.call('POST', url, {
        update: { 'app.k10': big(100_000) },
        delete: ['app.k0'],
      });
      assert.equal(swap.status, 'ok', swap.message);
    });
  });
}
