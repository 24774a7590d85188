import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { EVENT_RETAIN_COUNT, EventQueue } from '../../platform/events/event-queue.js';

interface Ev {
  id: number;
  event: string;
  time: number;
  [field: string]: unknown;
}

for (const dialect of DIALECTS) {
  describe(`event channel (${dialect})`, () => {
    test('events to a user reach every session of that user, with ids from 0 per session', async (t) => {
      const app = await build(t, { dialect });
      const { client: first, user } = await loggedInClient(app);
      const second = new Client(app);
      await second.login(user.username, user.password);
      const { client: stranger } = await loggedInClient(app);

      app.services.hub.emit({ users: [user.uuid] }, 'user_modify');
      app.services.hub.emit({ users: [user.uuid] }, 'tag_delete', { tag: 'x' });

      for (const client of [first, second]) {
        const answer = await client.call('GET', '/api/event?next=0&timeout=0');
        const events = answer.event as Ev[];
        assert.deepEqual(
          events.map((e) => [e.id, e.event]),
          [
            [0, 'user_modify'],
            [1, 'tag_delete'],
          ],
        );
        assert.equal(events[1]!.tag, 'x');
        assert.ok(Math.abs(events[0]!.time - Date.now() / 1000) < 5);
        assert.equal((await client.call('GET', '/api/session')).next_event, 2);
      }
      assert.deepEqual((await stranger.call('GET', '/api/event?timeout=0')).event, []);
    });

    test('a long-poll waits for the next event and returns at once when it arrives', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const pending = client.call('GET', '/api/event?timeout=30');
      await new Promise((resolve) => setTimeout(resolve, 50));
      app.services.hub.emit({ users: [user.uuid] }, 'user_modify');
      const answer = await pending;
      assert.equal(answer.status, 'ok');
      assert.deepEqual(
        (answer.event as Ev[]).map((e) => e.id),
        [0],
      );
    });

    test('timeout answers an empty list; next defaults to next_event', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      app.services.hub.emit({ users: [user.uuid] }, 'user_modify');
      assert.deepEqual((await client.call('GET', '/api/event?timeout=1&next=1')).event, []);
      // Without next the session's next_event (1) is used, so the old event is not repeated.
      assert.deepEqual((await client.call('GET', '/api/event?timeout=0')).event, []);
    });

    test('events to a session by did reach only that session', async (t) => {
      const app = await build(t, { dialect });
      const { client: a } = await loggedInClient(app);
      const sessionA = await a.call('GET', '/api/session');
      const { client: b } = await loggedInClient(app);
      app.services.hub.emit({ sessions: [sessionA.did as string] }, 'presentation_keepalive', {
        presentation: 'p',
      });
      assert.equal(((await a.call('GET', '/api/event?timeout=0')).event as Ev[]).length, 0);
      assert.equal(
        ((await a.call('GET', '/api/event?next=0&timeout=0')).event as Ev[])[0]!.presentation,
        'p',
      );
      assert.deepEqual((await b.call('GET', '/api/event?next=0&timeout=0')).event, []);
    });
  });
}

describe('event channel limits', () => {
  test('timeout and next are checked', async (t) => {
    const app = await build(t);
    const { client } = await loggedInClient(app);
    assert.equal((await client.call('GET', '/api/event?timeout=301')).status, 'wrong-syntax');
    assert.equal((await client.call('GET', '/api/event?timeout=-1')).status, 'wrong-syntax');
    assert.equal((await client.call('GET', '/api/event?next=abc')).status, 'wrong-syntax');
    const anonymous = await app.server.inject('/api/event?timeout=0');
    assert.equal(anonymous.json().status, 'no-session');
  });

  test('at most 100 events per answer, in id order', async (t) => {
    const app = await build(t);
    const { client, user } = await loggedInClient(app);
    for (let i = 0; i < 150; i++) app.services.hub.emit({ users: [user.uuid] }, 'user_modify', { n: i });
    const first = (await client.call('GET', '/api/event?next=0&timeout=0')).event as Ev[];
    assert.equal(first.length, 100);
    assert.deepEqual(
      first.map((e) => e.id),
      Array.from({ length: 100 }, (_, i) => i),
    );
    const rest = (await client.call('GET', '/api/event?next=100&timeout=0')).event as Ev[];
    assert.equal(rest.length, 50);
    assert.equal(rest[49]!.id, 149);
  });

  test('the queue is bounded: a client behind the window gets the oldest retained events and sees the gap', () => {
    const queue = new EventQueue();
    for (let i = 0; i < EVENT_RETAIN_COUNT + 250; i++) queue.push('user_modify', {});
    const events = queue.read(0);
    assert.equal(events[0]!.id, 250);
    assert.equal(queue.snapshot().length, EVENT_RETAIN_COUNT);
    assert.equal(queue.nextId, EVENT_RETAIN_COUNT + 250);
  });

  test('events older than the retention time are dropped, newer ones kept', () => {
    const queue = new EventQueue();
    const now = Math.floor(Date.now() / 1000);
    queue.push('old', {}, now - 601);
    queue.push('new', {}, now);
    assert.deepEqual(
      queue.read(0).map((e) => e.event),
      ['new'],
    );
  });
});
