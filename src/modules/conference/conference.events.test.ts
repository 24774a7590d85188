/**
 * A conference's events (docs/decisions.md "Conferences") on both databases: a session that
 * subscribes gets conference_status at once and then the room's join, update and leave, while
 * conference_start and conference_stop reach every reader; a session not subscribed, and a user
 * who may not read the room, get none of the room's events. The call engine's side (which calls
 * `started`, `room` and `stopped`) is played by the test.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import { MAX_SUBSCRIPTIONS } from './conference.events.js';

const names = (events: { event: string }[]) => events.map((event) => event.event);

for (const dialect of DIALECTS) {
  describe(`conference events (${dialect})`, () => {
    test("subscribers get the room's status and changes; readers its start and stop; others nothing", async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      // A second session of the owner that does not subscribe.
      const elsewhere = new Client(app);
      await elsewhere.login(user.username, user.password);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const uuid = (await owner.call('POST', '/api/conference', { description: 'Daily' })).uuid as string;
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });
      for (const client of [owner, elsewhere, reader, stranger]) await newEvents(client);

      const subscribed = await owner.call('GET', `/api/conference/${uuid}/event?timeout=60`);
      assert.equal(subscribed.status, 'ok');
      assert.ok(typeof subscribed.expires === 'number');
      assert.deepEqual(
        (await newEvents(owner)).map(({ event, conference, member }) => ({ event, conference, member })),
        [{ event: 'conference_status', conference: uuid, member: {} }],
      );
      assert.equal((await stranger.call('GET', `/api/conference/${uuid}/event`)).status, 'wrong-object');

      // The engine's room: the reader subscribes once a member is in; its status shows the member.
      const member = {
        phone: '+4930123456',
        mute: false,
        deaf: false,
        talk: false,
        floor: true,
        volume_in: 0,
        volume_out: 0,
      };
      const { events } = app.services.conferences;
      events.attachRooms({ members: (conference) => (conference === uuid ? { m1: member } : undefined) });
      const room = { uuid, owner: user.uuid, description: 'Daily' };
      await events.started(room);
      await events.room(room, 'conference_join', { m1: member });
      assert.equal((await reader.call('GET', `/api/conference/${uuid}/event`)).status, 'ok');
      await events.room(room, 'conference_update', { m1: { talk: true } });
      await events.room(room, 'conference_leave', ['m1']);
      await events.stopped(room);

      const ownerEvents = await newEvents(owner);
      assert.deepEqual(names(ownerEvents), [
        'conference_start',
        'conference_join',
        'conference_update',
        'conference_leave',
        'conference_stop',
      ]);
      assert.deepEqual(ownerEvents[0], {
        ...ownerEvents[0],
        conference: uuid,
        owner: user.uuid,
        description: 'Daily',
      });
      assert.deepEqual(ownerEvents[1]?.member, { m1: member });
      assert.deepEqual(ownerEvents[2]?.member, { m1: { talk: true } });
      assert.deepEqual(ownerEvents[3]?.member, ['m1']);
      // The reader subscribed after the join: its status had the member, then the rest.
      const readerEvents = await newEvents(reader);
      assert.deepEqual(names(readerEvents), [
        'conference_start',
        'conference_status',
        'conference_update',
        'conference_leave',
        'conference_stop',
      ]);
      assert.deepEqual(readerEvents.find((event) => event.event === 'conference_status')?.member, {
        m1: member,
      });
      // Not subscribed: start and stop only. A stranger: nothing.
      assert.deepEqual(names(await newEvents(elsewhere)), ['conference_start', 'conference_stop']);
      assert.deepEqual(names(await newEvents(stranger)), []);

      // Unsubscribed: the room's events stop.
      assert.deepEqual(await owner.call('DELETE', `/api/conference/${uuid}/event`), { status: 'ok' });
      await events.room(room, 'conference_join', { m2: member });
      assert.deepEqual(names(await newEvents(owner)), []);
      assert.deepEqual(names(await newEvents(reader)), ['conference_join']);
    });

    test(`a session follows ${MAX_SUBSCRIPTIONS} rooms at most; renewing one is not another`, async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const rooms: string[] = [];
      for (let n = 0; n <= MAX_SUBSCRIPTIONS; n++)
        rooms.push((await client.call('POST', '/api/conference', {})).uuid as string);
      for (const uuid of rooms.slice(0, MAX_SUBSCRIPTIONS))
        assert.equal((await client.call('GET', `/api/conference/${uuid}/event`)).status, 'ok');
      assert.equal(
        (await client.call('GET', `/api/conference/${rooms.at(-1)}/event`)).status,
        'exceeded-limit',
      );
      assert.equal((await client.call('GET', `/api/conference/${rooms[0]}/event?timeout=10`)).status, 'ok');
      assert.deepEqual(await client.call('DELETE', `/api/conference/${rooms[0]}/event`), { status: 'ok' });
      assert.equal((await client.call('GET', `/api/conference/${rooms.at(-1)}/event`)).status, 'ok');
      assert.equal(
        (await client.call('GET', `/api/conference/${rooms[0]}/event?timeout=0`)).status,
        'wrong-syntax',
      );
    });
  });
}
