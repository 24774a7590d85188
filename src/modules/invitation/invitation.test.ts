import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, type Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';
import { SettableClock } from '../../platform/clock.js';

const MISSING = '6f1c1a40-0000-1000-8000-000000000000';

async function contact(client: Client, firstname = 'C'): Promise<string> {
  return (await client.call('POST', '/api/contact', { firstname, lastname: 'L' })).uuid as string;
}

async function invite(from: Client, username: string): Promise<string> {
  const answer = await from.call('POST', '/api/user/invitation', { username });
  assert.equal(answer.status, 'ok');
  return answer.invitation as string;
}

/** Links two users the way clients do: invitation, then acceptance. */
async function link(from: Client, to: Client, toUsername: string): Promise<void> {
  const id = await invite(from, toUsername);
  assert.equal((await to.call('POST', '/api/user/link', { invitation: id })).status, 'ok');
}

async function three(app: App) {
  return {
    a: await loggedInClient(app),
    b: await loggedInClient(app),
    c: await loggedInClient(app),
  };
}

for (const dialect of DIALECTS) {
  describe(`invitations and user links (${dialect})`, () => {
    test('inviting: by username or e-mail; invitation_new to both; who may see it; bad input', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c } = await three(app);
      const id = await invite(a.client, b.user.username);
      const payload = { invitation: id, owner: a.user.uuid, user: b.user.uuid };
      for (const client of [a.client, b.client]) {
        const [event] = await newEvents(client, 'invitation_new');
        assert.deepEqual(
          { ...event, id: 0, time: 0 },
          { id: 0, time: 0, event: 'invitation_new', ...payload },
        );
      }
      assert.deepEqual(await newEvents(c.client), []);
      const expected = {
        owner: a.user.uuid,
        owner_username: a.user.username,
        owner_display_name: 'Ada Lovelace',
        user: b.user.uuid,
        user_username: b.user.username,
        user_display_name: 'Ada Lovelace',
      };
      for (const client of [a.client, b.client]) {
        const listed = (await client.call('GET', '/api/user/invitation')).invitation as Record<
          string,
          object
        >;
        assert.deepEqual(Object.keys(listed), [id]);
        const one = (await client.call('GET', `/api/invitation/${id}`)).invitation as { time: number };
        assert.deepEqual(one, { ...expected, time: one.time });
      }
      assert.deepEqual((await c.client.call('GET', '/api/user/invitation')).invitation, {});
      assert.equal((await c.client.call('GET', `/api/invitation/${id}`)).status, 'wrong-invitation');
      assert.equal(
        (await a.client.call('GET', `/api/invitation/${'x'.repeat(24)}`)).status,
        'wrong-invitation',
      );
      assert.equal((await a.client.call('GET', '/api/invitation/short')).status, 'wrong-syntax');

      for (const [body, status] of [
        [{}, 'missing-element'],
        [{ username: 'a' }, 'wrong-syntax'],
        [{ username: 'no-dashes!' }, 'wrong-syntax'],
        [{ email: 'not-an-address' }, 'wrong-syntax'],
        [{ username: 'nobodyhere' }, 'wrong-user'],
        [{ username: a.user.username }, 'wrong-user'],
        [{ username: b.user.username }, 'already-exist'],
      ] as const) {
        assert.equal(
          (await a.client.call('POST', '/api/user/invitation', body)).status,
          status,
          JSON.stringify(body),
        );
      }
      // A pending invitation the other way round counts too.
      assert.equal(
        (await b.client.call('POST', '/api/user/invitation', { username: a.user.username })).status,
        'already-exist',
      );
      assert.equal(
        Object.keys((await a.client.call('GET', '/api/user/invitation')).invitation as object).length,
        1,
      );
      const byMail = await a.client.call('POST', '/api/user/invitation', {
        email: c.user.email!.toUpperCase(),
      });
      assert.equal(byMail.status, 'ok');
      assert.equal((await newEvents(c.client, 'invitation_new'))[0]?.owner, a.user.uuid);

      // At most 100 pending invitations sent (a has 2 now).
      const d = await loggedInClient(app);
      const rows = Array.from({ length: 98 }, (_, i) => ({
        id: `filler-invitation-${String(i).padStart(4, '0')}`,
        owner: a.user.uuid,
        user_uuid: d.user.uuid,
        time: 0,
      }));
      await app.services.store.db.insertInto('invitation').values(rows).execute();
      const e = await loggedInClient(app);
      assert.equal(
        (await a.client.call('POST', '/api/user/invitation', { username: e.user.username })).status,
        'exceeded-limit',
      );
      assert.equal((await newEvents(e.client, 'invitation_new')).length, 0);
    });

    test('accepting links the two: share tags, object_share for what was shared already; declining and withdrawing', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c } = await three(app);
      const tagsA = await app.services.tags.getUserTags(a.user.uuid);
      const object = await contact(a.client);
      await a.client.call('POST', `/api/object/${object}/tag`, { add: [tagsA.share_read] });
      const id = await invite(a.client, b.user.username);
      await newEvents(a.client);
      await newEvents(b.client);
      assert.equal(
        (await a.client.call('POST', '/api/user/link', { invitation: id })).status,
        'access-denied',
      );
      assert.equal(
        (await c.client.call('POST', '/api/user/link', { invitation: id })).status,
        'wrong-invitation',
      );
      assert.equal((await b.client.call('POST', '/api/user/link', {})).status, 'missing-element');
      assert.equal((await b.client.call('GET', `/api/contact/${object}`)).status, 'wrong-contact');
      assert.deepEqual(await b.client.call('POST', '/api/user/link', { invitation: id }), {
        status: 'ok',
        user: a.user.uuid,
      });
      const events = await newEvents(b.client);
      assert.equal(events.filter((e) => e.event === 'invitation_delete').length, 1);
      assert.equal(events.find((e) => e.event === 'object_share')?.object, object);
      const modified = events.filter((e) => e.event === 'tag_modify').map((e) => e.tag);
      assert.ok(modified.includes(tagsA.share_read));
      assert.equal((await newEvents(a.client, 'invitation_delete')).length, 1);
      assert.equal((await b.client.call('GET', `/api/contact/${object}`)).status, 'ok');
      assert.equal(
        (await b.client.call('POST', '/api/user/link', { invitation: id })).status,
        'wrong-invitation',
      );
      const linksA = (await a.client.call('GET', '/api/user/link')).link as Record<
        string,
        { username: string }
      >;
      assert.deepEqual(Object.keys(linksA), [b.user.uuid]);
      assert.equal(linksA[b.user.uuid]?.username, b.user.username);
      assert.deepEqual(Object.keys((await b.client.call('GET', '/api/user/link')).link as object), [
        a.user.uuid,
      ]);
      assert.deepEqual((await c.client.call('GET', '/api/user/link')).link, {});
      assert.equal(
        (await a.client.call('POST', '/api/user/invitation', { username: b.user.username })).status,
        'already-exist',
      );

      // Declined by the invited user, withdrawn by its sender; strangers cannot touch it.
      const declined = await invite(c.client, a.user.username);
      assert.equal(
        (await b.client.call('DELETE', `/api/user/invitation/${declined}`)).status,
        'wrong-invitation',
      );
      await newEvents(c.client);
      assert.equal((await a.client.call('DELETE', `/api/user/invitation/${declined}`)).status, 'ok');
      assert.equal((await newEvents(c.client, 'invitation_delete')).length, 1);
      assert.equal((await c.client.call('GET', `/api/invitation/${declined}`)).status, 'wrong-invitation');
      const withdrawn = await invite(c.client, a.user.username);
      assert.equal((await c.client.call('DELETE', `/api/user/invitation/${withdrawn}`)).status, 'ok');
      assert.equal(
        (await a.client.call('POST', '/api/user/link', { invitation: withdrawn })).status,
        'wrong-invitation',
      );
      assert.equal(
        (await a.client.call('DELETE', `/api/user/invitation/${withdrawn}`)).status,
        'wrong-invitation',
      );
    });

    test("the invitation's and the link's time are the app clock's, not the system's", async (t) => {
      // Far from the system's time: a stamp read from the system clock cannot match.
      const clock = new SettableClock(1_500_000_000_000);
      const app = await build(t, { dialect, clock });
      const { a, b } = await three(app);
      const id = await invite(a.client, b.user.username);
      const listed = (await a.client.call('GET', '/api/user/invitation')).invitation as Record<
        string,
        { time: number }
      >;
      assert.equal(listed[id]?.time, 1_500_000_000);
      clock.advance(3_600_000);
      assert.equal((await b.client.call('POST', '/api/user/link', { invitation: id })).status, 'ok');
      const links = (await a.client.call('GET', '/api/user/link')).link as Record<string, { time: number }>;
      assert.equal(links[b.user.uuid]?.time, 1_500_003_600);
    });

    test('GET /api/user/{user-uuid}: linked users and oneself only', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c } = await three(app);
      await link(a.client, b.client, b.user.username);
      const tagsA = await app.services.tags.getUserTags(a.user.uuid);
      assert.deepEqual(await b.client.call('GET', `/api/user/${a.user.uuid}`), {
        status: 'ok',
        user: {
          uuid: a.user.uuid,
          username: a.user.username,
          display_name: 'Ada Lovelace',
          firstname: 'Ada',
          lastname: 'Lovelace',
          share_read: tagsA.share_read,
          share_write: tagsA.share_write,
          share_propagate: tagsA.share_propagate,
        },
      });
      assert.equal((await a.client.call('GET', `/api/user/${a.user.uuid}`)).status, 'ok');
      assert.equal((await c.client.call('GET', `/api/user/${a.user.uuid}`)).status, 'wrong-user');
      assert.equal((await c.client.call('GET', `/api/user/${MISSING}`)).status, 'wrong-user');
      assert.equal((await c.client.call('GET', '/api/user/nope')).status, 'wrong-syntax');
      // b can list what a shares with it through a's share tags.
      const object = await contact(a.client);
      await a.client.call('POST', `/api/object/${object}/tag`, { add: [tagsA.share_write] });
      const listed = (await b.client.call('GET', `/api/tag/${tagsA.share_write}/object`)).object as {
        uuid: string;
      }[];
      assert.deepEqual(
        listed.map((o) => o.uuid),
        [object],
      );
    });

    test('unlinking takes back what was shared, also what was shared further, and custom tag policies', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, c } = await three(app);
      await link(a.client, b.client, b.user.username);
      await link(b.client, c.client, c.user.username);
      const tagsA = await app.services.tags.getUserTags(a.user.uuid);
      const tagsB = await app.services.tags.getUserTags(b.user.uuid);
      const shared = await contact(a.client, 'Shared');
      const viaCustom = await contact(a.client, 'Custom');
      const custom = (await a.client.call('POST', '/api/tag', { label: 'T', policy: { [b.user.uuid]: 1 } }))
        .uuid as string;
      await a.client.call('POST', `/api/object/${shared}/tag`, { add: [tagsA.share_propagate] });
      await a.client.call('POST', `/api/object/${viaCustom}/tag`, { add: [custom] });
      assert.equal(
        (await b.client.call('POST', `/api/object/${shared}/tag`, { add: [tagsB.share_read] })).status,
        'ok',
      );
      assert.equal((await c.client.call('GET', `/api/contact/${shared}`)).status, 'ok');
      const bOwn = await contact(b.client, 'B');
      await b.client.call('POST', `/api/object/${bOwn}/tag`, { add: [tagsB.share_read] });
      assert.equal((await a.client.call('GET', `/api/contact/${bOwn}`)).status, 'ok');
      for (const client of [a.client, b.client, c.client]) await newEvents(client);

      assert.equal((await c.client.call('DELETE', `/api/user/link/${a.user.uuid}`)).status, 'wrong-user');
      assert.equal((await a.client.call('DELETE', `/api/user/link/${b.user.uuid}`)).status, 'ok');
      const eventsB = await newEvents(b.client);
      const unshared = eventsB.filter((e) => e.event === 'object_unshare').map((e) => e.object);
      assert.deepEqual(new Set(unshared), new Set([shared, viaCustom]));
      const lost = eventsB.find((e) => e.event === 'tag_modify' && e.tag === custom);
      assert.equal((lost!.policy as Record<string, number>)[b.user.uuid], 0);
      assert.deepEqual(
        (await newEvents(c.client, 'object_unshare')).map((e) => e.object),
        [shared],
      );
      assert.deepEqual(
        (await newEvents(a.client, 'object_unshare')).map((e) => e.object),
        [bOwn],
      );
      for (const [client, uuid] of [
        [b.client, shared],
        [b.client, viaCustom],
        [c.client, shared],
        [a.client, bOwn],
      ] as const) {
        assert.equal((await client.call('GET', `/api/contact/${uuid}`)).status, 'wrong-contact');
      }
      assert.equal((await b.client.call('GET', `/api/tag/${custom}`)).status, 'wrong-tag');
      assert.equal((await b.client.call('GET', `/api/user/${a.user.uuid}`)).status, 'wrong-user');
      assert.deepEqual((await a.client.call('GET', '/api/user/link')).link, {});
      // b's share tag left a's object; b and c stay linked.
      const view = (await a.client.call('GET', `/api/contact/${shared}`)).contact as { tag: string[] };
      assert.deepEqual(view.tag.sort(), [tagsA.tag_all, tagsA.share_propagate].sort());
      assert.deepEqual(Object.keys((await c.client.call('GET', '/api/user/link')).link as object), [
        b.user.uuid,
      ]);
    });

    test('deleting an account purges its objects and unshares what others shared with it', async (t) => {
      const app = await build(t, { dialect });
      const { a, b } = await three(app);
      await link(a.client, b.client, b.user.username);
      const tagsA = await app.services.tags.getUserTags(a.user.uuid);
      const tagsB = await app.services.tags.getUserTags(b.user.uuid);
      const ofA = await contact(a.client, 'A');
      const ofB = await contact(b.client, 'B');
      await a.client.call('POST', `/api/object/${ofA}/tag`, { add: [tagsA.share_read] });
      await b.client.call('POST', `/api/object/${ofB}/tag`, { add: [tagsB.share_read] });
      await newEvents(a.client);
      assert.equal(await app.services.users.deleteUser(b.user.uuid), true);
      const events = await newEvents(a.client);
      assert.equal(events.find((e) => e.event === 'object_delete')?.object, ofB);
      assert.equal((await a.client.call('GET', `/api/contact/${ofB}`)).status, 'wrong-contact');
      const view = (await a.client.call('GET', `/api/contact/${ofA}`)).contact as { tag: string[] };
      assert.deepEqual(view.tag.sort(), [tagsA.tag_all, tagsA.share_read].sort());
      assert.deepEqual((await a.client.call('GET', '/api/user/link')).link, {});
    });
  });
}
