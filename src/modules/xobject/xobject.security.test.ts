/**
 * Client-defined objects as an attacker sees them: a stranger, a reader, a session that
 * never logged in and bad input change nothing; the stranger's lists and events show nothing of
 * the owner's xobject; xobjects count against the owner's volume quota.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkUsers } from '../../../test/object-store.js';
import * as security from '../../../test/security.js';

for (const dialect of DIALECTS) {
  describe(`xobject security (${dialect})`, () => {
    test('a stranger, no session, bad input and the volume bound change nothing; the stranger sees nothing', async (t) => {
      const app = await build(t, { dialect });
      const { owner, attacker, anonymous } = await security.parties(app);
      const uuid = (
        await owner.client.call('POST', '/api/xobject', { xtype: 'a.b', description: 'd', data: { v: [1] } })
      ).uuid as string;
      const watch = { watcher: owner.client, reads: [`/api/xobject/${uuid}`, '/api/xobject'] };
      const routes: security.Call[] = [
        ['GET', `/api/xobject/${uuid}`],
        ['POST', `/api/xobject/${uuid}`, { description: 'x', data: 2 }],
        ['DELETE', `/api/xobject/${uuid}`],
        ['DELETE', `/api/xobject/${uuid}?purge`],
      ];
      await security.expectRefused(attacker.client, security.refusals(routes, 'wrong-xobject'), watch);
      await security.expectNoLeak(
        attacker.client,
        ['/api/xobject', '/api/xobject?count=500&xtype=a.b'],
        [uuid],
      );
      await security.expectNoAuth(
        anonymous,
        [...routes, ['GET', '/api/xobject'], ['POST', '/api/xobject', { xtype: 'a', data: 1 }]],
        watch,
      );
      await security.expectRefused(
        owner.client,
        [
          ['POST', '/api/xobject', { xtype: 'a', description: security.HUGE, data: 1 }, 'wrong-syntax'],
          ['POST', '/api/xobject', { xtype: ['a'], data: 1 }, 'wrong-syntax'],
          ['POST', '/api/xobject', { xtype: 'a', data: security.HUGE }, 'too-large'],
          ['POST', `/api/xobject/${uuid}`, { data: Array(20_000).fill('abcde') }, 'too-large'],
          ['POST', `/api/xobject/${uuid}`, { description: 7 }, 'wrong-syntax'],
          ['GET', '/api/xobject?count=0', undefined, 'wrong-syntax'],
          ['GET', '/api/xobject?count=501', undefined, 'wrong-syntax'],
          ['GET', `/api/xobject/${security.MISSING_UUID}`, undefined, 'wrong-xobject'],
          ['DELETE', '/api/xobject/not-a-uuid', undefined, 'wrong-syntax'],
        ],
        watch,
      );
      await security.onlyPack(app, owner.user.uuid, { volume: 0 });
      await security.expectRefused(
        owner.client,
        [
          ['POST', '/api/xobject', { xtype: 'a', data: 1 }, 'quota-exceeded'],
          ['POST', `/api/xobject/${uuid}`, { data: 'more than before' }, 'quota-exceeded'],
        ],
        watch,
      );
    });

    test('isolation: strangers learn nothing through any route; readers cannot change', async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      const uuid = (await owner.call('POST', '/api/xobject', { xtype: 'a', data: 1 })).uuid as string;
      await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });
      const strangerTag = (await stranger.call('POST', '/api/tag', { label: 's' })).uuid as string;
      const strangerObject = (await stranger.call('POST', '/api/xobject', { xtype: 'a', data: 2 }))
        .uuid as string;
      for (const target of [uuid, security.MISSING_UUID]) {
        assert.equal((await stranger.call('GET', `/api/xobject/${target}`)).status, 'wrong-xobject');
        assert.equal(
          (await stranger.call('POST', `/api/xobject/${target}`, { data: 2 })).status,
          'wrong-xobject',
        );
        assert.equal((await stranger.call('DELETE', `/api/xobject/${target}`)).status, 'wrong-xobject');
        assert.equal((await stranger.call('DELETE', `/api/xobject/${target}?purge`)).status, 'wrong-xobject');
        for (const [method, path, body] of [
          ['GET', 'comment', undefined],
          ['POST', 'comment', { text: 'hi' }],
          ['GET', 'link', undefined],
          ['POST', `link/${strangerObject}`, {}],
          ['DELETE', `link/${strangerObject}`, undefined],
          ['GET', 'metadata', undefined],
          ['POST', 'metadata', { update: { 'ab.cd': 1 } }],
          ['POST', 'tag', { add: [strangerTag] }],
        ] as const) {
          const answer = await stranger.call(method, `/api/object/${target}/${path}`, body);
          assert.equal(answer.status, 'wrong-object', `${method} ${path}`);
        }
      }
      assert.equal((await stranger.call('GET', `/api/tag/${tags.tag_all}/object`)).status, 'wrong-tag');
      assert.equal((await stranger.call('GET', `/api/tag/${tags.share_read}/object`)).status, 'wrong-tag');
      assert.deepEqual(Object.keys((await stranger.call('GET', '/api/xobject')).xobject as object), [
        strangerObject,
      ]);

      assert.equal((await reader.call('GET', `/api/xobject/${uuid}`)).status, 'ok');
      assert.equal((await reader.call('POST', `/api/xobject/${uuid}`, { data: 2 })).status, 'access-denied');
      assert.equal((await reader.call('DELETE', `/api/xobject/${uuid}`)).status, 'access-denied');
      assert.equal(
        (await reader.call('POST', `/api/object/${uuid}/metadata`, { update: { 'ab.cd': 1 } })).status,
        'access-denied',
      );
      assert.equal((await reader.call('POST', `/api/object/${uuid}/comment`, { text: 'fine' })).status, 'ok');
      assert.equal(((await owner.call('GET', `/api/xobject/${uuid}`)).xobject as { data: unknown }).data, 1);
    });
  });
}
