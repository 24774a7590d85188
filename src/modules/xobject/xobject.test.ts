import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';

for (const dialect of DIALECTS) {
  describe(`xobject (${dialect})`, () => {
    test('create, read, change, delete; events as for every object; list by xtype', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const body = { xtype: 'com.example.note', description: 'first', data: { text: 'hi', n: [1, 2] } };
      const created = await client.call('POST', '/api/xobject', body);
      assert.equal(created.status, 'ok');
      const uuid = created.uuid as string;
      const [event] = await newEvents(client, 'object_new');
      assert.equal(event?.type, 'xobject');
      assert.equal(event?.object, uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      const got = (await client.call('GET', `/api/xobject/${uuid}`)).xobject as Record<string, unknown>;
      assert.deepEqual(got, {
        owner: user.uuid,
        time: got.time,
        modified: got.modified,
        description: 'first',
        xtype: 'com.example.note',
        data: { text: 'hi', n: [1, 2] },
        tag: [tags.tag_all],
      });

      assert.equal((await client.call('POST', `/api/xobject/${uuid}`, { data: 'plain' })).status, 'ok');
      const [modified] = await newEvents(client, 'object_modify');
      assert.equal(modified?.user, user.uuid);
      const changed = (await client.call('GET', `/api/xobject/${uuid}`)).xobject as {
        data: unknown;
        description: string;
      };
      assert.equal(changed.data, 'plain');
      assert.equal(changed.description, 'first');
      assert.equal((await client.call('POST', `/api/xobject/${uuid}`, { data: null })).status, 'ok');
      assert.equal(
        ((await client.call('GET', `/api/xobject/${uuid}`)).xobject as { data: unknown }).data,
        null,
      );

      const other = (await client.call('POST', '/api/xobject', { xtype: 'other', data: 1 })).uuid as string;
      const listed = (await client.call('GET', '/api/xobject')).xobject as Record<string, unknown>;
      assert.deepEqual(Object.keys(listed), [uuid, other]);
      assert.deepEqual(
        Object.keys((await client.call('GET', '/api/xobject?xtype=other')).xobject as object),
        [other],
      );
      assert.deepEqual(
        Object.keys((await client.call('GET', '/api/xobject?order=desc&count=1')).xobject as object),
        [other],
      );
      const byTag = (await client.call('GET', `/api/tag/${tags.tag_all}/object?type=xobject`)).object as {
        uuid: string;
      }[];
      assert.deepEqual(
        byTag.map((o) => o.uuid),
        [uuid, other],
      );

      assert.equal((await client.call('DELETE', `/api/xobject/${other}`)).status, 'ok');
      assert.deepEqual(Object.keys((await client.call('GET', '/api/xobject')).xobject as object), [uuid]);
      assert.equal((await client.call('DELETE', `/api/xobject/${other}?purge`)).status, 'ok');
      assert.equal((await client.call('GET', `/api/xobject/${other}`)).status, 'wrong-xobject');
      const deleted = await newEvents(client, 'object_delete');
      assert.deepEqual(
        deleted.map((e) => e.purge),
        [undefined, true],
      );
    });

    test('bad input is refused and stores nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuid = (await client.call('POST', '/api/xobject', { xtype: 'a', data: { v: 1 } })).uuid as string;
      const cases: [unknown, string][] = [
        [{ data: 1 }, 'missing-element'],
        [{ xtype: 'a' }, 'missing-element'],
        [{ xtype: '', data: 1 }, 'wrong-syntax'],
        [{ xtype: 'has space', data: 1 }, 'wrong-syntax'],
        [{ xtype: 'x'.repeat(51), data: 1 }, 'wrong-syntax'],
        [{ xtype: 5, data: 1 }, 'wrong-syntax'],
        [{ xtype: 'a', description: 'd'.repeat(201), data: 1 }, 'wrong-syntax'],
        [{ xtype: 'a', data: 'x'.repeat(100 * 1024) }, 'too-large'],
      ];
      for (const [body, status] of cases) {
        assert.equal(
          (await client.call('POST', '/api/xobject', body)).status,
          status,
          JSON.stringify(body).slice(0, 60),
        );
      }
      assert.deepEqual(Object.keys((await client.call('GET', '/api/xobject')).xobject as object), [uuid]);
      for (const [body, status] of [
        [{ description: 'd'.repeat(201) }, 'wrong-syntax'],
        [{ description: 'ok', data: 'x'.repeat(100 * 1024) }, 'too-large'],
      ] as const) {
        assert.equal((await client.call('POST', `/api/xobject/${uuid}`, body)).status, status);
      }
      const kept = (await client.call('GET', `/api/xobject/${uuid}`)).xobject as {
        data: unknown;
        description: string;
      };
      assert.deepEqual(kept.data, { v: 1 });
      assert.equal(kept.description, '');
      assert.equal((await client.call('GET', '/api/xobject?count=501')).status, 'wrong-syntax');
      assert.equal((await client.call('GET', '/api/xobject?xtype=no%20space')).status, 'wrong-syntax');
      assert.equal((await client.call('GET', '/api/xobject/nope')).status, 'wrong-syntax');
    });

    test('storage volume is accounted and enforced against the feature packs (quota-exceeded)', async (t) => {
      const app = await build(t, { dialect });
      const { features, store } = app.services;
      await features.createPack('tiny', { quota: { volume: 1 } });
      const { client, user } = await loggedInClient(app);
      await features.unassignPack(user.uuid, 'default');
      await features.assignPack(user.uuid, 'tiny');
      const base = await store.usedVolume(user.uuid);
      const chunk = 'x'.repeat(90 * 1024);
      // Each object takes its stored fields: description and data.
      const size = (data: unknown) => JSON.stringify({ data }).length;
      const made: string[] = [];
      for (;;) {
        const answer = await client.call('POST', '/api/xobject', { xtype: 'blob', data: chunk });
        if (answer.status !== 'ok') {
          assert.equal(answer.status, 'quota-exceeded');
          break;
        }
        made.push(answer.uuid as string);
        assert.ok(made.length < 20, 'the quota never applied');
      }
      const used = await store.usedVolume(user.uuid);
      assert.equal(used, base + made.length * size(chunk));
      assert.ok(used <= 1024 * 1024);
      assert.ok(used + size(chunk) > 1024 * 1024);
      assert.equal(
        Object.keys((await client.call('GET', '/api/xobject?count=100')).xobject as object).length,
        made.length,
      );
      // Shrinking is always fine; growing an object past the quota is not.
      const small = made[0]!;
      assert.equal((await client.call('POST', `/api/xobject/${small}`, { data: 'tiny' })).status, 'ok');
      assert.equal(await store.usedVolume(user.uuid), used - size(chunk) + size('tiny'));
      assert.equal((await client.call('POST', '/api/xobject', { xtype: 'blob', data: chunk })).status, 'ok');
      const full = used + size('tiny');
      assert.equal(await store.usedVolume(user.uuid), full);
      const grow = 'y'.repeat(99 * 1024);
      assert.equal(
        (await client.call('POST', `/api/xobject/${small}`, { data: grow })).status,
        'quota-exceeded',
      );
      assert.equal(
        ((await client.call('GET', `/api/xobject/${small}`)).xobject as { data: unknown }).data,
        'tiny',
      );
      // Trash still counts; purging frees the space.
      await client.call('DELETE', `/api/xobject/${made[1]}`);
      assert.equal(await store.usedVolume(user.uuid), full);
      await client.call('DELETE', '/api/trash');
      assert.equal(await store.usedVolume(user.uuid), full - size(chunk));
      assert.equal((await client.call('POST', `/api/xobject/${small}`, { data: grow })).status, 'ok');
    });
  });
}
