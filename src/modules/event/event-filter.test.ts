/** POST/DELETE /api/event/filter (spec "Events"; shape per the route's OpenAPI description) on both databases. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, Client, DIALECTS, loggedInClient, testEnv } from '../../../test/helper.js';
import { buildApp } from '../../app.js';
import { loadConfig } from '../../platform/config.js';

interface Ev {
  id: number;
  event: string;
}

const names = (events: unknown) => (events as Ev[]).map((e) => [e.id, e.event]);

for (const dialect of DIALECTS) {
  describe(`event filter (${dialect})`, () => {
    test('a filtered session receives only the names it asked for, ids stay contiguous; DELETE lifts it', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const other = new Client(app);
      await other.login(user.username, user.password);
      const { hub } = app.services;
      const set = await client.call('POST', '/api/event/filter', {
        event: ['tag_delete', 'user_modify', 'user_modify'],
      });
      assert.deepEqual(set, { status: 'ok', event: ['tag_delete', 'user_modify'] });
      hub.emit({ users: [user.uuid] }, 'user_modify');
      hub.emit({ users: [user.uuid] }, 'object_new', { object: 'x' });
      hub.emit({ users: [user.uuid] }, 'tag_delete', { tag: 'y' });
      assert.deepEqual(names((await client.call('GET', '/api/event?next=0&timeout=0')).event), [
        [0, 'user_modify'],
        [1, 'tag_delete'],
      ]);
      // The session's other sessions are not filtered.
      assert.deepEqual(names((await other.call('GET', '/api/event?next=0&timeout=0')).event), [
        [0, 'user_modify'],
        [1, 'object_new'],
        [2, 'tag_delete'],
      ]);
      // A new filter replaces the old one.
      await client.call('POST', '/api/event/filter', { event: ['object_new'] });
      hub.emit({ users: [user.uuid] }, 'user_modify');
      hub.emit({ users: [user.uuid] }, 'object_new', { object: 'z' });
      assert.deepEqual(names((await client.call('GET', '/api/event?next=2&timeout=0')).event), [
        [2, 'object_new'],
      ]);
      assert.deepEqual(await client.call('DELETE', '/api/event/filter'), { status: 'ok' });
      assert.deepEqual(await client.call('DELETE', '/api/event/filter'), { status: 'ok' });
      hub.emit({ users: [user.uuid] }, 'user_modify');
      assert.deepEqual(names((await client.call('GET', '/api/event?next=3&timeout=0')).event), [
        [3, 'user_modify'],
      ]);
    });

    test('bad filters are wrong-syntax or missing-element and change nothing; no session, no auth', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      await client.call('POST', '/api/event/filter', { event: ['user_modify'] });
      for (const [body, status] of [
        [{}, 'missing-element'],
        [{ event: [] }, 'wrong-syntax'],
        [{ event: 'user_modify' }, 'wrong-syntax'],
        [{ event: ['User-Modify'] }, 'wrong-syntax'],
        [{ event: ['x'.repeat(51)] }, 'wrong-syntax'],
        [{ event: Array.from({ length: 101 }, (_, i) => `e${i}`) }, 'wrong-syntax'],
      ] as const) {
        assert.equal(
          (await client.call('POST', '/api/event/filter', body)).status,
          status,
          JSON.stringify(body),
        );
      }
      assert.equal(
        (
          await client.call('POST', '/api/event/filter', {
            event: Array.from({ length: 100 }, (_, i) => `e${i}`),
          })
        ).status,
        'ok',
      );
      await client.call('POST', '/api/event/filter', { event: ['user_modify'] });
      app.services.hub.emit({ users: [user.uuid] }, 'object_new');
      app.services.hub.emit({ users: [user.uuid] }, 'user_modify');
      assert.deepEqual(names((await client.call('GET', '/api/event?next=0&timeout=0')).event), [
        [0, 'user_modify'],
      ]);
      assert.equal(
        (await new Client(app).call('POST', '/api/event/filter', { event: ['a'] })).status,
        'no-session',
      );
      const anonymous = new Client(app);
      await anonymous.open();
      assert.equal((await anonymous.call('POST', '/api/event/filter', { event: ['a'] })).status, 'no-auth');
      assert.equal((await anonymous.call('DELETE', '/api/event/filter')).status, 'no-auth');
    });

    test('the filter survives a restart of the node', async (t) => {
      const env = await testEnv(t, dialect);
      const first = await buildApp(loadConfig(env));
      const { client, user } = await loggedInClient(first);
      await client.call('POST', '/api/event/filter', { event: ['user_modify'] });
      await first.close();
      const second = await buildApp(loadConfig(env));
      t.after(() => second.close());
      const again = new Client(second);
      again.sid = client.sid;
      second.services.hub.emit({ users: [user.uuid] }, 'object_new');
      second.services.hub.emit({ users: [user.uuid] }, 'user_modify');
      const events = (await again.call('GET', '/api/event?next=0&timeout=0')).event as Ev[];
      assert.deepEqual(
        events.map((e) => e.event),
        ['user_modify'],
      );
    });
  });
}
