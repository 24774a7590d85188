/**
 * Contacts as an attacker sees them: a stranger, a reader, a session that never logged
 * in and bad input change nothing, and the stranger's lists and events show nothing of the owner's
 * contact; contacts and their entries count against the owner's volume quota.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import * as security from '../../../test/security.js';

const phone = { type: 'phone', value: '+49301234' };

for (const dialect of DIALECTS) {
  describe(`contact security (${dialect})`, () => {
    test('a stranger, no session and bad input change nothing; the stranger sees nothing of it', async (t) => {
      const app = await build(t, { dialect });
      const { owner, attacker, anonymous } = await security.parties(app);
      const uuid = (await owner.client.call('POST', '/api/contact', { firstname: 'A', lastname: 'B' }))
        .uuid as string;
      await owner.client.call('POST', `/api/contact/${uuid}`, { create: [phone] });
      const watch = { watcher: owner.client, reads: [`/api/contact/${uuid}`, '/api/contact'] };
      const routes: security.Call[] = [
        ['GET', `/api/contact/${uuid}`],
        ['POST', `/api/contact/${uuid}`, { firstname: 'X', create: [phone] }],
        ['DELETE', `/api/contact/${uuid}`],
        ['DELETE', `/api/contact/${uuid}?purge`],
      ];
      await security.expectRefused(attacker.client, security.refusals(routes, 'wrong-contact'), watch);
      await security.expectNoLeak(
        attacker.client,
        ['/api/contact', '/api/contact?count=1000&order=desc'],
        [uuid],
      );
      const all: security.Call[] = [
        ...routes,
        ['GET', '/api/contact'],
        ['POST', '/api/contact', { firstname: 'C', lastname: 'D' }],
      ];
      await security.expectNoAuth(anonymous, all, watch);
      await security.expectRefused(
        owner.client,
        [
          ['POST', '/api/contact', { lastname: 'B' }, 'missing-element'],
          ['POST', '/api/contact', { firstname: security.HUGE, lastname: 'B' }, 'wrong-syntax'],
          ['POST', '/api/contact', { firstname: 5, lastname: 'B' }, 'wrong-syntax'],
          ['POST', '/api/contact', [], 'wrong-syntax'],
          ['GET', '/api/contact/not-a-uuid', undefined, 'wrong-syntax'],
          ['GET', `/api/contact/${security.MISSING_UUID}`, undefined, 'wrong-contact'],
          ['GET', '/api/contact?count=0', undefined, 'wrong-syntax'],
          ['GET', '/api/contact?count=1001', undefined, 'wrong-syntax'],
          ['POST', `/api/contact/${uuid}`, { create: Array(1001).fill(phone) }, 'wrong-syntax'],
          [
            'POST',
            `/api/contact/${uuid}`,
            { create: [{ type: 'address', value: security.HUGE }] },
            'wrong-syntax',
          ],
          [
            'POST',
            `/api/contact/${uuid}`,
            { delete: Array(1001).fill(security.MISSING_UUID) },
            'wrong-syntax',
          ],
          ['DELETE', '/api/contact/not-a-uuid', undefined, 'wrong-syntax'],
        ],
        watch,
      );
    });

    test('isolation: strangers learn nothing, readers cannot change, writers can', async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const uuid = (await owner.call('POST', '/api/contact', { firstname: 'A', lastname: 'B' }))
        .uuid as string;
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });

      const missing = '6f1c1a40-0000-1000-8000-000000000000';
      for (const target of [uuid, missing, tags.tag_all]) {
        assert.equal((await stranger.call('GET', `/api/contact/${target}`)).status, 'wrong-contact');
        assert.equal(
          (await stranger.call('POST', `/api/contact/${target}`, { firstname: 'X' })).status,
          'wrong-contact',
        );
        assert.equal((await stranger.call('DELETE', `/api/contact/${target}`)).status, 'wrong-contact');
      }
      assert.equal((await stranger.call('GET', '/api/contact/not-a-uuid')).status, 'wrong-syntax');
      assert.equal((await reader.call('GET', `/api/contact/${uuid}`)).status, 'ok');
      // Each sees the tags on it that they may read, as the store's visible tags say (the GET
      // reads them with the object in one statement).
      const { store } = app.services;
      const visible = await store.visibleTags(store.db, [uuid], [user.uuid, readerUser.uuid]);
      assert.ok(visible(readerUser.uuid, uuid).length > 0);
      assert.notDeepEqual(visible(readerUser.uuid, uuid), visible(user.uuid, uuid));
      for (const [client, viewer] of [
        [owner, user.uuid],
        [reader, readerUser.uuid],
      ] as const) {
        const answer = await client.call('GET', `/api/contact/${uuid}`);
        assert.deepEqual((answer.contact as { tag: string[] }).tag, visible(viewer, uuid));
      }
      assert.equal(
        (await reader.call('POST', `/api/contact/${uuid}`, { firstname: 'X' })).status,
        'access-denied',
      );
      assert.equal((await reader.call('DELETE', `/api/contact/${uuid}`)).status, 'access-denied');
      assert.equal(
        ((await owner.call('GET', `/api/contact/${uuid}`)).contact as { firstname: string }).firstname,
        'A',
      );

      await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_write] });
      assert.equal((await reader.call('POST', `/api/contact/${uuid}`, { firstname: 'X' })).status, 'ok');
      const [event] = await newEvents(owner, 'object_modify');
      assert.equal(event?.user, readerUser.uuid);
      // A contact of another type's uuid is wrong-contact even for its owner.
      assert.equal((await owner.call('GET', `/api/contact/${tags.share_read}`)).status, 'wrong-contact');
      assert.equal((await stranger.call('GET', '/api/contact')).status, 'ok');
      assert.equal(
        ((await stranger.call('GET', '/api/contact')).contact as Record<string, unknown>)[uuid],
        undefined,
      );
    });

    test('bound: contacts and their entries count against the volume quota', async (t) => {
      const app = await build(t, { dialect });
      const { owner } = await security.parties(app);
      const uuid = (await owner.client.call('POST', '/api/contact', { firstname: 'A', lastname: 'B' }))
        .uuid as string;
      await security.onlyPack(app, owner.user.uuid, { volume: 0 });
      const watch = { watcher: owner.client, reads: [`/api/contact/${uuid}`, '/api/contact'] };
      await security.expectRefused(
        owner.client,
        [
          ['POST', '/api/contact', { firstname: 'C', lastname: 'D' }, 'quota-exceeded'],
          ['POST', `/api/contact/${uuid}`, { create: [phone] }, 'quota-exceeded'],
          ['POST', `/api/contact/${uuid}`, { lastname: 'A much longer name' }, 'quota-exceeded'],
        ],
        watch,
      );
      // What does not grow is still allowed.
      assert.equal((await owner.client.call('POST', `/api/contact/${uuid}`, { lastname: 'C' })).status, 'ok');
    });
  });
}
