import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  build,
  buildUser,
  Client,
  createPostgresDatabase,
  DIALECTS,
  loggedInClient,
} from '../../../test/helper.js';
import { linkUsers } from '../../../test/object-store.js';
import { EventReader, makePdf, type TestEvent, upload } from '../../../test/presentation.js';
import type { App } from '../../app.js';

const UNKNOWN = '6f1c1a40-0000-1000-8000-000000000000';

interface Member {
  client: Client;
  uuid: string;
  events: EventReader;
}

async function member(client: Client, uuid: string): Promise<Member> {
  const events = new EventReader(client);
  await events.skipAll();
  return { client, uuid, events };
}

/**
 * A presentation with three slides owned by the first user, shared read-only with the others
 * (all linked with the owner). Every user's events are read from now on.
 */
async function setup(app: App, others = 2) {
  const { client, user } = await loggedInClient(app);
  const uuid = (await client.call('POST', '/api/presentation', { description: 'live' })).uuid as string;
  assert.equal((await upload(client, `/api/presentation/${uuid}/deck.pdf`, await makePdf(3))).status, 'ok');
  await app.services.content.idle();
  const tags = await app.services.tags.getUserTags(user.uuid);
  await client.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });
  const users: Member[] = [];
  for (let i = 0; i < others; i++) {
    const other = await loggedInClient(app);
    await linkUsers(app, user.uuid, other.user.uuid);
    users.push(await member(other.client, other.user.uuid));
  }
  return { uuid, owner: await member(client, user.uuid), users };
}

function control(who: Member, uuid: string, body: Record<string, unknown>): Promise<string> {
  return who.client.call('POST', `/api/presentation/${uuid}/control`, body).then((answer) => answer.status);
}

function subscribe(who: Member, uuid: string) {
  return who.client.call('GET', `/api/presentation/${uuid}/event`);
}

/** The status fields that describe the state (without the event envelope). */
function stateOf(event: TestEvent) {
  const { id: _id, time: _time, event: _name, ...fields } = event;
  return fields;
}

const ofPresentation = (uuid: string) => (event: TestEvent) => event.presentation === uuid;

for (const dialect of DIALECTS) {
  describe(`presentation control (${dialect})`, () => {
    test('the state table: start, join, page, pointer, moderator, leave, stop, each with presentation_status', async (t) => {
      const app = await build(t, { dialect });
      const { uuid, owner: a, users } = await setup(app);
      const [b, watcher] = users as [Member, Member];
      assert.deepEqual(await subscribe(watcher, uuid), { status: 'ok', busy: false });
      assert.deepEqual(await watcher.events.drain('presentation_status'), []);

      assert.equal(await control(a, uuid, { control: 'start' }), 'ok');
      const started = stateOf(await watcher.events.waitFor('presentation_status', ofPresentation(uuid)));
      assert.deepEqual(started, {
        presentation: uuid,
        busy: true,
        version: started.version,
        moderator: a.uuid,
        page: 1,
        pointer: { x: 0.5, y: 0.5, visible: false },
        member_count: 1,
        member: [a.uuid],
      });
      assert.equal(
        ((await a.client.call('GET', `/api/presentation/${uuid}`)).presentation as { busy: boolean }).busy,
        true,
      );

      assert.equal(await control(b, uuid, { control: 'join' }), 'ok');
      const joined = await watcher.events.waitFor('presentation_status');
      assert.deepEqual(joined.member, [a.uuid, b.uuid]);
      assert.equal(joined.member_count, 2);
      assert.ok((joined.version as number) > (started.version as number));
      // Joining again changes nothing.
      assert.equal(await control(b, uuid, { control: 'join' }), 'ok');

      assert.equal(await control(a, uuid, { control: 'page', page: 2 }), 'ok');
      const paged = await watcher.events.waitFor('presentation_status');
      assert.equal(paged.page, 2);
      assert.equal(paged.member, undefined);
      assert.equal(paged.member_count, 2);
      assert.ok((paged.version as number) > (joined.version as number));

      assert.equal(await control(a, uuid, { control: 'pointer', x: 0.25, y: 0.75, visible: true }), 'ok');
      assert.deepEqual((await watcher.events.waitFor('presentation_status')).pointer, {
        x: 0.25,
        y: 0.75,
        visible: true,
      });
      assert.equal(await control(a, uuid, { control: 'pointer', visible: false }), 'ok');
      assert.deepEqual((await watcher.events.waitFor('presentation_status')).pointer, {
        x: 0.25,
        y: 0.75,
        visible: false,
      });
      assert.equal(await control(a, uuid, { control: 'pointer', x: 0, y: 1 }), 'ok');
      assert.deepEqual((await watcher.events.waitFor('presentation_status')).pointer, {
        x: 0,
        y: 1,
        visible: false,
      });

      assert.equal(await control(a, uuid, { control: 'moderator', moderator: b.uuid }), 'ok');
      const handed = await watcher.events.waitFor('presentation_status');
      assert.equal(handed.moderator, b.uuid);
      assert.equal(await control(a, uuid, { control: 'page', page: 3 }), 'access-denied');
      assert.equal(await control(b, uuid, { control: 'page', page: 3 }), 'ok');
      assert.equal((await watcher.events.waitFor('presentation_status')).page, 3);

      // The moderator leaves: the member who joined first takes over.
      assert.equal(await control(b, uuid, { control: 'leave' }), 'ok');
      const left = await watcher.events.waitFor('presentation_status');
      assert.equal(left.moderator, a.uuid);
      assert.deepEqual(left.member, [a.uuid]);
      assert.equal(left.page, 3);

      assert.equal(await control(a, uuid, { control: 'stop' }), 'ok');
      const stopped = await watcher.events.waitFor('presentation_status');
      assert.deepEqual(stateOf(stopped), { presentation: uuid, busy: false, version: stopped.version });
      assert.equal(
        ((await a.client.call('GET', `/api/presentation/${uuid}`)).presentation as { busy: boolean }).busy,
        false,
      );
      assert.equal(await control(b, uuid, { control: 'join' }), 'illegal-state');

      // A new start begins at page 1 with the starter as the only member; versions keep growing.
      assert.equal(await control(b, uuid, { control: 'start' }), 'access-denied');
      assert.equal(await control(a, uuid, { control: 'start' }), 'ok');
      const again = await watcher.events.waitFor('presentation_status');
      assert.equal(again.page, 1);
      assert.deepEqual(again.member, [a.uuid]);
      assert.ok((again.version as number) > (stopped.version as number));
    });

    test('illegal-state, access-denied and bad input are refused and change nothing', async (t) => {
      const app = await build(t, { dialect });
      const { uuid, owner: a, users } = await setup(app, 3);
      const [b, c, reader] = users as [Member, Member, Member];
      const { client: strangerClient, user: stranger } = await loggedInClient(app);
      const outsider = await member(strangerClient, stranger.uuid);
      const { presentationLive } = app.services;
      const snapshot = () => presentationLive.statusPayload(app.database.db, uuid, true);

      // Not started: everything but start.
      for (const body of [
        { control: 'stop' },
        { control: 'join' },
        { control: 'leave' },
        { control: 'keepalive' },
        { control: 'moderator', moderator: b.uuid },
        { control: 'page', page: 1 },
        { control: 'pointer', x: 0.5 },
      ]) {
        assert.equal(await control(a, uuid, body), 'illegal-state', JSON.stringify(body));
      }
      assert.equal(await control(reader, uuid, { control: 'start' }), 'access-denied');
      assert.deepEqual(await snapshot(), { presentation: uuid, busy: false, version: 0 });

      assert.equal(await control(a, uuid, { control: 'start' }), 'ok');
      assert.equal(await control(b, uuid, { control: 'join' }), 'ok');
      assert.equal(await control(a, uuid, { control: 'page', page: 2 }), 'ok');
      const before = await snapshot();

      const cases: [Member, Record<string, unknown>, string][] = [
        [a, { control: 'start' }, 'illegal-state'],
        [b, { control: 'start' }, 'illegal-state'],
        // c is not a member.
        [c, { control: 'leave' }, 'illegal-state'],
        [c, { control: 'keepalive' }, 'illegal-state'],
        [c, { control: 'stop' }, 'illegal-state'],
        [c, { control: 'page', page: 1 }, 'illegal-state'],
        [c, { control: 'pointer', x: 0.1 }, 'illegal-state'],
        [c, { control: 'moderator', moderator: c.uuid }, 'illegal-state'],
        // b is a member, not the moderator.
        [b, { control: 'stop' }, 'access-denied'],
        [b, { control: 'page', page: 3 }, 'access-denied'],
        [b, { control: 'pointer', x: 0.1 }, 'access-denied'],
        [b, { control: 'moderator', moderator: b.uuid }, 'access-denied'],
        // The moderator with bad input.
        [a, { control: 'moderator', moderator: c.uuid }, 'illegal-state'],
        [a, { control: 'moderator', moderator: UNKNOWN }, 'illegal-state'],
        [a, { control: 'moderator', moderator: 'nobody' }, 'wrong-syntax'],
        [a, { control: 'moderator' }, 'missing-element'],
        [a, { control: 'page', page: 4 }, 'wrong-syntax'],
        [a, { control: 'page', page: 0 }, 'wrong-syntax'],
        [a, { control: 'page', page: 1.5 }, 'wrong-syntax'],
        [a, { control: 'page', page: '2' }, 'wrong-syntax'],
        [a, { control: 'page' }, 'missing-element'],
        [a, { control: 'pointer', x: 1.01 }, 'wrong-syntax'],
        [a, { control: 'pointer', x: 0.5, y: -0.1 }, 'wrong-syntax'],
        [a, { control: 'pointer', visible: 'yes' }, 'wrong-syntax'],
        [a, { control: 'jump' }, 'wrong-syntax'],
        [a, {}, 'missing-element'],
        [outsider, { control: 'join' }, 'wrong-presentation'],
        [outsider, { control: 'stop' }, 'wrong-presentation'],
      ];
      for (const [who, body, status] of cases) {
        assert.equal(await control(who, uuid, body), status, JSON.stringify(body));
        assert.deepEqual(await snapshot(), before, JSON.stringify(body));
      }
      assert.equal(
        (await a.client.call('POST', `/api/presentation/${UNKNOWN}/control`, { control: 'start' })).status,
        'wrong-presentation',
      );
      // Controls that change nothing send nothing and leave the version alone.
      await a.events.drain();
      assert.equal(await control(a, uuid, { control: 'page', page: 2 }), 'ok');
      assert.equal(await control(a, uuid, { control: 'moderator', moderator: a.uuid }), 'ok');
      assert.equal(await control(a, uuid, { control: 'pointer' }), 'ok');
      assert.deepEqual(await snapshot(), before);
    });

    test('subscriptions: a new subscriber of a busy presentation gets its status at once; DELETE ends it', async (t) => {
      const app = await build(t, { dialect });
      const { uuid, owner: a, users } = await setup(app, 2);
      const [b, c] = users as [Member, Member];
      assert.equal(await control(a, uuid, { control: 'start' }), 'ok');
      assert.equal(await control(a, uuid, { control: 'page', page: 3 }), 'ok');

      assert.deepEqual(await subscribe(b, uuid), { status: 'ok', busy: true });
      const [first] = await b.events.drain('presentation_status');
      assert.equal(first?.page, 3);
      assert.deepEqual(first?.member, [a.uuid]);
      assert.deepEqual(await subscribe(c, uuid), { status: 'ok', busy: true });
      await c.events.drain();

      assert.deepEqual(await b.client.call('DELETE', `/api/presentation/${uuid}/event`), { status: 'ok' });
      assert.equal(await control(a, uuid, { control: 'page', page: 1 }), 'ok');
      assert.equal((await c.events.waitFor('presentation_status')).page, 1);
      assert.deepEqual(await b.events.drain('presentation_status'), []);
      // Unsubscribing twice is fine; strangers learn nothing.
      assert.equal((await b.client.call('DELETE', `/api/presentation/${uuid}/event`)).status, 'ok');
      const { client: stranger } = await loggedInClient(app);
      assert.equal(
        (await stranger.call('GET', `/api/presentation/${uuid}/event`)).status,
        'wrong-presentation',
      );
      assert.equal(
        (await stranger.call('DELETE', `/api/presentation/${uuid}/event`)).status,
        'wrong-presentation',
      );
      assert.equal(
        (await stranger.call('GET', `/api/presentation/${UNKNOWN}/event`)).status,
        'wrong-presentation',
      );
    });

    test('presence: keepalive requests, members dropped when silent or gone, the first joined becomes moderator', async (t) => {
      const app = await build(t, { dialect });
      const { uuid, owner: a, users } = await setup(app, 3);
      const [b, c, watcher] = users as [Member, Member, Member];
      const { presentationLive } = app.services;
      const { db } = app.database;
      await subscribe(watcher, uuid);
      assert.equal(await control(a, uuid, { control: 'start' }), 'ok');
      assert.equal(await control(b, uuid, { control: 'join' }), 'ok');
      assert.equal(await control(c, uuid, { control: 'join' }), 'ok');
      await watcher.events.waitFor(
        'presentation_status',
        (event) => (event.member as string[] | undefined)?.length === 3,
      );

      await presentationLive.tick();
      for (const who of [a, b, c]) {
        const asks = await who.events.drain('presentation_keepalive');
        // The node's own 20 s tick may also have asked on a slow machine: one presentation, asked.
        assert.deepEqual([...new Set(asks.map((event) => event.presentation))], [uuid]);
        assert.equal(await control(who, uuid, { control: 'keepalive' }), 'ok');
      }
      assert.deepEqual(await watcher.events.drain('presentation_keepalive'), []);

      // a (the moderator) and c stop answering; b goes on.
      const longAgo = Date.now() - 60_000;
      await db
        .updateTable('presentation_member')
        .set({ seen: longAgo })
        .where('user_uuid', 'in', [a.uuid, c.uuid])
        .execute();
      await presentationLive.tick();
      const dropped = await watcher.events.waitFor('presentation_status');
      assert.equal(dropped.moderator, b.uuid);
      assert.deepEqual(dropped.member, [b.uuid]);
      assert.equal(await control(a, uuid, { control: 'keepalive' }), 'illegal-state');
      assert.equal(await control(b, uuid, { control: 'page', page: 2 }), 'ok');
      assert.equal((await watcher.events.waitFor('presentation_status')).page, 2);

      // A moderator that vanished without leaving (its account deleted) is replaced at the next round.
      assert.equal(await control(a, uuid, { control: 'join' }), 'ok');
      await watcher.events.waitFor('presentation_status', (event) => event.member_count === 2);
      assert.equal(await control(b, uuid, { control: 'moderator', moderator: a.uuid }), 'ok');
      await watcher.events.waitFor('presentation_status', (event) => event.moderator === a.uuid);
      await db.deleteFrom('presentation_member').where('user_uuid', '=', a.uuid).execute();
      await presentationLive.tick();
      const replaced = await watcher.events.waitFor(
        'presentation_status',
        (event) => event.moderator === b.uuid,
      );
      assert.deepEqual(replaced.member, [b.uuid]);

      // b's session ends: b is dropped at the next round, the presentation stops.
      assert.equal((await b.client.call('DELETE', '/api/session')).status, 'ok');
      await presentationLive.tick();
      const stopped = await watcher.events.waitFor('presentation_status');
      assert.equal(stopped.busy, false);
      assert.equal(
        ((await a.client.call('GET', `/api/presentation/${uuid}`)).presentation as { busy: boolean }).busy,
        false,
      );

      // Subscriptions of ended sessions go too.
      const subscribers = () =>
        db.selectFrom('presentation_subscriber').select('did').where('presentation', '=', uuid).execute();
      assert.equal((await subscribers()).length, 1);
      assert.equal((await watcher.client.call('DELETE', '/api/session')).status, 'ok');
      await presentationLive.tick();
      assert.equal((await subscribers()).length, 0);
    });

    test('a presence round asked for while one runs runs after it: it sees what changed meanwhile', async (t) => {
      const app = await build(t, { dialect });
      const { uuid, owner: a, users } = await setup(app, 2);
      const [b] = users as [Member];
      const { presentationLive } = app.services;
      assert.equal(await control(a, uuid, { control: 'start' }), 'ok');
      assert.equal(await control(b, uuid, { control: 'join' }), 'ok');
      await presentationLive.tick();
      await a.events.drain('presentation_keepalive');
      // The second round is asked for while the first runs (as the node's own 20 s round may):
      // two rounds, two keepalive requests, not one shared round.
      await Promise.all([presentationLive.tick(), presentationLive.tick()]);
      assert.equal((await a.events.drain('presentation_keepalive')).length, 2);
    });

    test('joining again from another session moves the member there, without a status', async (t) => {
      const app = await build(t, { dialect });
      const { uuid, owner: a, users } = await setup(app, 2);
      const [b, watcher] = users as [Member, Member];
      await subscribe(watcher, uuid);
      assert.equal(await control(a, uuid, { control: 'start' }), 'ok');
      assert.equal(await control(b, uuid, { control: 'join' }), 'ok');
      const joined = await watcher.events.waitFor('presentation_status', (event) => event.member_count === 2);
      const { username } = (await b.client.call('GET', '/api/user')).user as { username: string };
      const second = new Client(app);
      await second.login(username, 'secret-pw');
      const moved = await member(second, b.uuid);
      assert.equal(await control(moved, uuid, { control: 'join' }), 'ok');
      const before = await app.services.presentationLive.statusPayload(app.database.db, uuid, true);
      assert.equal(before.version, joined.version);
      assert.deepEqual(before.member, [a.uuid, b.uuid]);

      // The first session ends: b stays, and the keepalive requests go to the second one.
      assert.equal((await b.client.call('DELETE', '/api/session')).status, 'ok');
      await app.services.presentationLive.tick();
      assert.deepEqual(
        (await moved.events.drain('presentation_keepalive')).map((event) => event.presentation),
        [uuid],
      );
      assert.deepEqual(
        (await app.services.presentationLive.statusPayload(app.database.db, uuid, true)).member,
        [a.uuid, b.uuid],
      );
      assert.equal(await control(moved, uuid, { control: 'keepalive' }), 'ok');
    });

    test('deleting a started presentation stops it; new slides move a page beyond them to 1', async (t) => {
      const app = await build(t, { dialect });
      const { uuid, owner: a, users } = await setup(app, 1);
      const [watcher] = users as [Member];
      await subscribe(watcher, uuid);
      assert.equal(await control(a, uuid, { control: 'start' }), 'ok');
      assert.equal(await control(a, uuid, { control: 'page', page: 3 }), 'ok');
      await watcher.events.waitFor('presentation_status', (event) => event.page === 3);

      assert.equal(
        (await upload(a.client, `/api/presentation/${uuid}/short.pdf`, await makePdf(2))).status,
        'ok',
      );
      await app.services.content.idle();
      const moved = await watcher.events.waitFor('presentation_status');
      assert.equal(moved.page, 1);
      assert.equal(moved.busy, true);

      assert.equal((await a.client.call('DELETE', `/api/presentation/${uuid}`)).status, 'ok');
      assert.equal((await watcher.events.waitFor('presentation_status')).busy, false);
      assert.equal(
        ((await a.client.call('GET', `/api/presentation/${uuid}`)).presentation as { busy: boolean }).busy,
        false,
      );
      assert.equal(
        (await watcher.client.call('GET', `/api/presentation/${uuid}`)).status,
        'wrong-presentation',
      );
    });
  });
}

describe('presentation control across nodes', () => {
  test('two nodes sharing PostgreSQL see the same members, moderator and page; either drops silent members', async (t) => {
    const url = await createPostgresDatabase();
    const node1 = await build(t, {
      dialect: 'postgres',
      env: { DATABASE_URL: url, PUBLIC_URL: 'http://127.0.0.1:18081' },
    });
    const node2 = await build(t, {
      dialect: 'postgres',
      env: { DATABASE_URL: url, PUBLIC_URL: 'http://127.0.0.1:18082' },
    });
    const { uuid, owner: a } = await setup(node1, 0);
    const bUser = await buildUser(node1);
    await linkUsers(node1, a.uuid, bUser.uuid);
    const bClient = new Client(node2);
    await bClient.login(bUser.username, bUser.password);
    const b = await member(bClient, bUser.uuid);

    assert.deepEqual(await subscribe(b, uuid), { status: 'ok', busy: false });
    assert.deepEqual(await subscribe(a, uuid), { status: 'ok', busy: false });
    assert.equal(await control(a, uuid, { control: 'start' }), 'ok');
    assert.equal((await b.events.waitFor('presentation_status')).moderator, a.uuid);

    assert.equal(await control(b, uuid, { control: 'join' }), 'ok');
    const joined = await a.events.waitFor(
      'presentation_status',
      (event) => (event.member as string[] | undefined)?.length === 2,
    );
    assert.deepEqual(joined.member, [a.uuid, b.uuid]);
    assert.equal(await control(a, uuid, { control: 'page', page: 2 }), 'ok');
    assert.equal((await b.events.waitFor('presentation_status', (event) => event.page === 2)).page, 2);
    assert.equal(
      ((await bClient.call('GET', `/api/presentation/${uuid}`)).presentation as { busy: boolean }).busy,
      true,
    );

    // Each node asks its own members for keepalives.
    await a.events.drain();
    await b.events.drain();
    await node2.services.presentationLive.tick();
    assert.equal((await b.events.waitFor('presentation_keepalive')).presentation, uuid);
    assert.deepEqual(await a.events.drain('presentation_keepalive'), []);
    assert.equal(await control(b, uuid, { control: 'keepalive' }), 'ok');

    // a (held by node 1) falls silent; node 2 drops it and b becomes moderator everywhere.
    await node1.database.db
      .updateTable('presentation_member')
      .set({ seen: Date.now() - 60_000 })
      .where('user_uuid', '=', a.uuid)
      .execute();
    await node2.services.presentationLive.tick();
    const handed = await a.events.waitFor('presentation_status', (event) => event.moderator === b.uuid);
    assert.deepEqual(handed.member, [b.uuid]);
    assert.equal(await control(b, uuid, { control: 'page', page: 3 }), 'ok');
    assert.equal(
      (await a.events.waitFor('presentation_status', (event) => event.page === 3)).moderator,
      b.uuid,
    );
    assert.equal(await control(a, uuid, { control: 'page', page: 1 }), 'illegal-state');
  });
});
