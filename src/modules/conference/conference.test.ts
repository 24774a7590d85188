/**
 * Conference objects (the spec's `/api/conference` family; docs/decisions.md "Conferences") on
 * both databases: settings with their defaults, PINs kept hashed, the numbers that dial into a
 * room and what a call to one finds, each refusal changing nothing, and access as for objects.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import { MISSING_UUID } from '../../../test/security.js';
import { MAX_CONFERENCES } from './conference.service.js';

type Conference = Record<string, unknown>;

for (const dialect of DIALECTS) {
  describe(`conference (${dialect})`, () => {
    test('a conference is created with its defaults, listed, changed and trashed like any object', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const created = await client.call('POST', '/api/conference', { description: 'Team' });
      assert.equal(created.status, 'ok');
      const uuid = created.uuid as string;
      assert.deepEqual(
        (await newEvents(client, 'object_new')).map((event) => event.object),
        [uuid],
      );
      const read = (await client.call('GET', `/api/conference/${uuid}`)).conference as Conference;
      const tags = await app.services.tags.getUserTags(user.uuid);
      assert.deepEqual(read, {
        owner: user.uuid,
        time: read.time,
        description: 'Team',
        tag: [tags.tag_all],
        pin: false,
        moderator_pin: false,
        moderator: [],
        max_members: 10,
        announcement_enter: null,
        announcement_leave: null,
        music: null,
        record: false,
        locked: false,
        phone: [],
      });
      assert.deepEqual(Object.keys((await client.call('GET', '/api/conference')).conference as object), [
        uuid,
      ]);

      assert.equal(
        (
          await client.call('POST', `/api/conference/${uuid}`, {
            max_members: 20,
            locked: true,
            record: true,
          })
        ).status,
        'ok',
      );
      const changed = (await client.call('GET', `/api/conference/${uuid}`)).conference as Conference;
      assert.deepEqual(
        [changed.max_members, changed.locked, changed.record, changed.description],
        [20, true, true, 'Team'],
      );
      assert.equal((await newEvents(client, 'object_modify')).length, 1);
      // The same values again change nothing: no event.
      await client.call('POST', `/api/conference/${uuid}`, { max_members: 20 });
      assert.equal((await newEvents(client, 'object_modify')).length, 0);

      assert.equal((await client.call('DELETE', `/api/conference/${uuid}`)).status, 'ok');
      assert.deepEqual((await client.call('GET', '/api/conference')).conference, {});
    });

    test('PINs are kept hashed, never shown, and tell a member from a moderator', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const uuid = (await client.call('POST', '/api/conference', { pin: '1234', moderator_pin: '987654' }))
        .uuid as string;
      const read = (await client.call('GET', `/api/conference/${uuid}`)).conference as Conference;
      assert.deepEqual([read.pin, read.moderator_pin], [true, true]);
      const stored = await app.database.db
        .selectFrom('object')
        .select('data')
        .where('uuid', '=', uuid)
        .executeTakeFirst();
      assert.ok(!stored?.data.includes('1234') && !stored?.data.includes('987654'), 'no PIN in clear');
      const room = { uuid, owner: user.uuid };
      const conferences = app.services.conferences;
      assert.equal(await conferences.checkPin(room, '1234'), 'member');
      assert.equal(await conferences.checkPin(room, '987654'), 'moderator');
      assert.equal(await conferences.checkPin(room, '0000'), undefined);
      // null clears one; the other stays.
      assert.equal((await client.call('POST', `/api/conference/${uuid}`, { pin: null })).status, 'ok');
      assert.equal(await conferences.checkPin(room, '1234'), undefined);
      assert.equal(await conferences.checkPin(room, '987654'), 'moderator');
      const after = (await client.call('GET', `/api/conference/${uuid}`)).conference as Conference;
      assert.deepEqual([after.pin, after.moderator_pin], [false, true]);
    });

    test("a call to one of the room's numbers finds it; switched off, trashed: offline; purged: nothing", async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { phones, conferences } = app.services;
      await phones.addNumber('+4930111222', { userUuid: user.uuid });
      await phones.addNumber('+4930111333', { userUuid: user.uuid });
      const uuid = (
        await client.call('POST', '/api/conference', { description: 'Dial-in', phone: ['+4930111222'] })
      ).uuid as string;
      const room = await conferences.roomOfPhone('+4930111222');
      assert.equal(typeof room === 'object' && room.uuid, uuid);
      assert.equal(await conferences.roomOfPhone('+4930111333'), undefined);

      // The number moves: the old one leads nowhere, the new one to the room.
      await client.call('POST', `/api/conference/${uuid}`, { phone: ['+4930111333'] });
      assert.equal(await conferences.roomOfPhone('+4930111222'), undefined);
      assert.equal(((await conferences.roomOfPhone('+4930111333')) as { uuid: string }).uuid, uuid);

      await phones.setSwitches('+4930111333', { conference_enable: false });
      assert.equal(await conferences.roomOfPhone('+4930111333'), 'offline');
      await phones.setSwitches('+4930111333', { conference_enable: true });
      await client.call('DELETE', `/api/conference/${uuid}`);
      assert.equal(await conferences.roomOfPhone('+4930111333'), 'offline');
      await client.call('DELETE', `/api/conference/${uuid}?purge`);
      assert.equal(await conferences.roomOfPhone('+4930111333'), undefined);
      // Free again for another room.
      assert.equal((await client.call('POST', '/api/conference', { phone: ['+4930111333'] })).status, 'ok');
    });

    test('bad input answers its status and changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: other, user: otherUser } = await loggedInClient(app);
      await app.services.phones.addNumber('+4930222333', { userUuid: user.uuid });
      await app.services.phones.addNumber('+4930222444', { userUuid: otherUser.uuid });
      const uuid = (await client.call('POST', '/api/conference', { phone: ['+4930222333'] })).uuid as string;
      const before = await client.call('GET', `/api/conference/${uuid}`);
      const cases: [Record<string, unknown>, string][] = [
        [{ pin: '12' }, 'wrong-syntax'],
        [{ pin: '12a4' }, 'wrong-syntax'],
        [{ pin: '1234', moderator_pin: '1234' }, 'wrong-syntax'],
        [{ max_members: 1 }, 'wrong-syntax'],
        [{ max_members: 101 }, 'wrong-syntax'],
        [{ colour: 'red' }, 'wrong-syntax'],
        [{ announcement_enter: MISSING_UUID }, 'wrong-announcement'],
        [{ moderator: [MISSING_UUID] }, 'wrong-user'],
        [{ phone: ['+4930222444'] }, 'wrong-phone'],
        [{ phone: ['not a number'] }, 'wrong-syntax'],
      ];
      for (const [body, status] of cases) {
        assert.equal(
          (await client.call('POST', '/api/conference', body)).status,
          status,
          JSON.stringify(body),
        );
        assert.equal(
          (await client.call('POST', `/api/conference/${uuid}`, body)).status,
          status,
          JSON.stringify(body),
        );
      }
      // A number another room has.
      assert.equal(
        (await client.call('POST', '/api/conference', { phone: ['+4930222333'] })).status,
        'phone-duplicate',
      );
      assert.deepEqual(await client.call('GET', `/api/conference/${uuid}`), before);
      assert.deepEqual(Object.keys((await client.call('GET', '/api/conference')).conference as object), [
        uuid,
      ]);
      assert.equal((await client.call('GET', `/api/conference/${MISSING_UUID}`)).status, 'wrong-object');
      assert.equal((await other.call('POST', '/api/conference', { moderator: [user.uuid] })).status, 'ok');
    });

    test(`a user keeps ${MAX_CONFERENCES} conferences, the trash included`, async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      let last = '';
      for (let n = 0; n < MAX_CONFERENCES; n++)
        last = (await client.call('POST', '/api/conference', {})).uuid as string;
      await client.call('DELETE', `/api/conference/${last}`);
      assert.equal((await client.call('POST', '/api/conference', {})).status, 'quota-exceeded');
      await client.call('DELETE', `/api/conference/${last}?purge`);
      assert.equal((await client.call('POST', '/api/conference', {})).status, 'ok');
    });

    test('isolation: strangers learn nothing, readers cannot change, writers change all but PINs and numbers', async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const uuid = (await owner.call('POST', '/api/conference', { description: 'Board' })).uuid as string;
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });
      for (const target of [uuid, MISSING_UUID]) {
        assert.equal((await stranger.call('GET', `/api/conference/${target}`)).status, 'wrong-object');
        assert.equal(
          (await stranger.call('POST', `/api/conference/${target}`, { description: 'x' })).status,
          'wrong-object',
        );
        assert.equal((await stranger.call('DELETE', `/api/conference/${target}`)).status, 'wrong-object');
      }
      assert.deepEqual((await stranger.call('GET', '/api/conference')).conference, {});
      assert.equal((await reader.call('GET', `/api/conference/${uuid}`)).status, 'ok');
      assert.equal(
        (await reader.call('POST', `/api/conference/${uuid}`, { description: 'x' })).status,
        'access-denied',
      );
      assert.equal((await reader.call('DELETE', `/api/conference/${uuid}`)).status, 'access-denied');

      await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_write] });
      assert.equal((await reader.call('POST', `/api/conference/${uuid}`, { locked: true })).status, 'ok');
      assert.equal(
        (await reader.call('POST', `/api/conference/${uuid}`, { pin: '4321' })).status,
        'access-denied',
      );
      assert.equal(
        (await reader.call('POST', `/api/conference/${uuid}`, { phone: [] })).status,
        'access-denied',
      );
      const read = (await owner.call('GET', `/api/conference/${uuid}`)).conference as Conference;
      assert.deepEqual([read.locked, read.pin, read.description], [true, false, 'Board']);
    });
  });
}
