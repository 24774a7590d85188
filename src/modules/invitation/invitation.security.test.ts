import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';

for (const dialect of DIALECTS) {
  describe(`invitations and tag policies show only what the caller may know (${dialect})`, () => {
    test('by e-mail: same answer for registered and unknown addresses; no UUID or names before acceptance', async (t) => {
      const app = await build(t, { dialect });
      const a = await loggedInClient(app);
      const b = await loggedInClient(app);
      await newEvents(a.client, 'invitation_new');
      const known = await a.client.call('POST', '/api/user/invitation', { email: b.user.email });
      const unknown = await a.client.call('POST', '/api/user/invitation', { email: 'nobody@example.com' });
      assert.deepEqual([known.status, unknown.status], ['ok', 'ok']);
      assert.deepEqual(Object.keys(known), Object.keys(unknown));
      // A second invitation to the same address: already-exist either way.
      for (const email of [b.user.email, 'NOBODY@example.com'])
        assert.equal(
          (await a.client.call('POST', '/api/user/invitation', { email })).status,
          'already-exist',
        );
      const listed = (await a.client.call('GET', '/api/user/invitation')).invitation as Record<
        string,
        Record<string, unknown>
      >;
      const views = [listed[known.invitation as string], listed[unknown.invitation as string]];
      for (const view of views) {
        assert.ok(view);
        assert.deepEqual(Object.keys(view).sort(), [
          'owner',
          'owner_display_name',
          'owner_username',
          'time',
          'user',
          'user_email',
        ]);
      }
      const seen = JSON.stringify([
        listed,
        await a.client.call('GET', `/api/invitation/${known.invitation}`),
        await newEvents(a.client, 'invitation_new'),
      ]);
      assert.ok(!seen.includes(b.user.uuid), "sender saw the invited user's UUID");
      // The invited user sees it as before, with its own UUID, and accepts.
      assert.equal((await newEvents(b.client, 'invitation_new'))[0]?.user, b.user.uuid);
      const mine = (await b.client.call('GET', '/api/user/invitation')).invitation as Record<
        string,
        Record<string, unknown>
      >;
      assert.deepEqual(Object.keys(mine), [known.invitation]);
      assert.equal(mine[known.invitation as string]?.user, b.user.uuid);
      assert.deepEqual(await b.client.call('POST', '/api/user/link', { invitation: known.invitation }), {
        status: 'ok',
        user: a.user.uuid,
      });
      // An invitation to no one cannot be accepted, not even by its sender; the sender withdraws it.
      assert.equal(
        (await a.client.call('POST', '/api/user/link', { invitation: unknown.invitation })).status,
        'access-denied',
      );
      assert.equal(
        (await a.client.call('DELETE', `/api/user/invitation/${unknown.invitation}`)).status,
        'ok',
      );
      assert.deepEqual((await a.client.call('GET', '/api/user/invitation')).invitation, {});
    });

    test("a tag's policy shows others only the owner and themselves, also in tag events", async (t) => {
      const app = await build(t, { dialect });
      const [a, b, c] = [await loggedInClient(app), await loggedInClient(app), await loggedInClient(app)];
      for (const other of [b, c]) {
        const id = (await a.client.call('POST', '/api/user/invitation', { username: other.user.username }))
          .invitation;
        assert.equal((await other.client.call('POST', '/api/user/link', { invitation: id })).status, 'ok');
      }
      await newEvents(b.client, 'tag_new');
      await newEvents(b.client, 'tag_modify');
      const created = await a.client.call('POST', '/api/tag', {
        label: 'team',
        policy: { [b.user.uuid]: 1, [c.user.uuid]: 2 },
      });
      assert.equal(created.status, 'ok');
      const tag = created.uuid as string;
      const full = { [a.user.uuid]: 4, [b.user.uuid]: 1, [c.user.uuid]: 2 };
      assert.deepEqual(
        ((await a.client.call('GET', `/api/tag/${tag}`)).tag as { policy: unknown }).policy,
        full,
      );
      const own = { [a.user.uuid]: 4, [b.user.uuid]: 1 };
      assert.deepEqual(
        ((await b.client.call('GET', `/api/tag/${tag}`)).tag as { policy: unknown }).policy,
        own,
      );
      const listed = (await b.client.call('GET', '/api/tag')).tag as Record<
        string,
        { owner: string; policy: Record<string, number> }
      >;
      assert.deepEqual(listed[tag]?.policy, own);
      // a's share tags: b sees no other user a is linked with.
      for (const view of Object.values(listed)) assert.ok(!(c.user.uuid in view.policy), 'b saw c');
      assert.deepEqual((await newEvents(b.client, 'tag_new')).find((e) => e.tag === tag)?.policy, own);
      assert.equal(
        (await a.client.call('POST', `/api/tag/${tag}`, { policy: { [c.user.uuid]: 0 } })).status,
        'ok',
      );
      assert.deepEqual((await newEvents(b.client, 'tag_modify')).find((e) => e.tag === tag)?.policy, own);
      assert.deepEqual((await newEvents(c.client, 'tag_modify')).find((e) => e.tag === tag)?.policy, {
        [a.user.uuid]: 4,
        [c.user.uuid]: 0,
      });
    });
  });
}
