/**
 * The event channel over WebSocket (spec "Events"; decisions.md "Event transports"): the same
 * events with the same ids as the long-poll, resumed after a restart of the node with nothing
 * lost or repeated, the long-poll's authentication, and a slow client closed at the buffer bound.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { Client, DIALECTS, loggedInClient, testEnv, until } from '../../../test/helper.js';
import { type App, buildApp } from '../../app.js';
import { loadConfig } from '../../platform/config.js';
import { EVENT_SOCKET_CLOSE_SLOW } from '../../platform/events/event-socket.js';

interface Ev {
  id: number;
  event: string;
  [field: string]: unknown;
}

async function listen(app: App): Promise<number> {
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.server.address() as AddressInfo).port;
}

/** A WebSocket client of the event channel; events and the close are recorded from the start. */
function connect(port: number, sid: string | undefined, query = '', headers: Record<string, string> = {}) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/api/event/ws${query}`, {
    headers: { ...headers, ...(sid ? { authorization: `Bearer ${sid}` } : {}) },
  });
  const events: Ev[] = [];
  socket.on('message', (data) => events.push(JSON.parse(String(data)) as Ev));
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  return { socket, events, opened, closed };
}

/** The status envelope of a refused upgrade. */
function refusal(port: number, sid: string | undefined, query = '', headers: Record<string, string> = {}) {
  return new Promise<string>((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/api/event/ws${query}`, {
      headers: { ...headers, ...(sid ? { authorization: `Bearer ${sid}` } : {}) },
    });
    socket.once('open', () => reject(new Error('upgrade accepted')));
    socket.once('error', () => undefined);
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => {
        body += chunk;
      });
      response.on('end', () => resolve((JSON.parse(body) as { status: string }).status));
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`event channel over WebSocket (${dialect})`, () => {
    test('the same events, ids and order as the long-poll, across a restart of the node; none of another user', async (t) => {
      const env = await testEnv(t, dialect);
      const first = await buildApp(loadConfig(env));
      let firstOpen = true;
      t.after(() => (firstOpen ? first.close() : undefined));
      const port = await listen(first);
      const { client, user } = await loggedInClient(first);
      const { client: stranger, user: other } = await loggedInClient(first);
      const ws = connect(port, client.sid);
      const foreign = connect(port, stranger.sid);
      await Promise.all([ws.opened, foreign.opened]);
      const hub = first.services.hub;
      for (let i = 0; i < 5; i++) hub.emit({ users: [user.uuid] }, 'object_new', { object: `a${i}`, n: i });
      hub.emit({ users: [other.uuid] }, 'tag_new', { tag: 'theirs' });
      await until(() => ws.events.length === 5, 'five events over the socket');
      await until(() => foreign.events.length === 1, "the stranger's own event");
      assert.deepEqual(
        foreign.events.map((e) => [e.id, e.event, e.tag]),
        [[0, 'tag_new', 'theirs']],
      );
      // Two more the socket may or may not see before the node stops: resumption covers both cases.
      hub.emit({ users: [user.uuid] }, 'object_new', { object: 'a5', n: 5 });
      hub.emit({ users: [user.uuid] }, 'object_new', { object: 'a6', n: 6 });
      await first.services.events.idle();
      const goingAway = ws.closed;
      firstOpen = false;
      await first.close();
      assert.equal(await goingAway, 1001);
      const before = [...ws.events];

      const second = await buildApp(loadConfig(env));
      t.after(() => second.close());
      const port2 = await listen(second);
      const resumed = connect(port2, client.sid, `?next=${before.at(-1)!.id + 1}`);
      await resumed.opened;
      for (let i = 7; i < 10; i++)
        second.services.hub.emit({ users: [user.uuid] }, 'object_new', { object: `a${i}`, n: i });
      await until(() => before.length + resumed.events.length === 10, 'every event after the restart');
      const overSocket = [...before, ...resumed.events];
      const again = new Client(second);
      again.sid = client.sid;
      const polled = (await again.call('GET', '/api/event?next=0&timeout=0')).event as Ev[];
      assert.deepEqual(overSocket, polled);
      assert.deepEqual(
        overSocket.map((e) => [e.id, e.object]),
        Array.from({ length: 10 }, (_, i) => [i, `a${i}`]),
      );
      resumed.socket.close();
    });

    test('refused upgrades answer the long-poll statuses; a plain GET is wrong-syntax', async (t) => {
      const app = await buildApp(loadConfig(await testEnv(t, dialect)));
      t.after(() => app.close());
      const port = await listen(app);
      const { client, user } = await loggedInClient(app);
      const sessionDid = app.services.sessions.findBySid(client.sid!)!.did;
      const anonymous = new Client(app);
      await anonymous.open();
      assert.equal(await refusal(port, undefined), 'no-session');
      assert.equal(await refusal(port, 'not-a-session'), 'no-session');
      assert.equal(await refusal(port, anonymous.sid), 'no-auth');
      assert.equal(await refusal(port, client.sid, '', { origin: 'https://evil.example' }), 'wrong-origin');
      assert.equal(await refusal(port, client.sid, '?next=-1'), 'wrong-syntax');
      assert.equal(await refusal(port, client.sid, '?next=abc'), 'wrong-syntax');
      assert.equal((await client.call('GET', '/api/event/ws')).status, 'wrong-syntax');
      assert.equal((await anonymous.call('GET', '/api/event/ws')).status, 'no-auth');
      // A session holds at most 8 connections.
      const eight = Array.from({ length: 8 }, () => connect(port, client.sid));
      await Promise.all(eight.map((c) => c.opened));
      assert.equal(await refusal(port, client.sid), 'exceeded-limit');
      const closedOne = eight[0]!.closed;
      eight[0]!.socket.close();
      await closedOne;
      await until(() => app.services.eventSockets.connectionsOf(sessionDid) < 8, 'the server saw the close');
      const ninth = connect(port, client.sid);
      await ninth.opened;
      for (const c of [...eight.slice(1), ninth]) c.socket.terminate();
      // The sid as a parameter, as the long-poll takes it; the refusals changed nothing.
      const ws = connect(port, undefined, `?sid=${client.sid}&next=0`);
      await ws.opened;
      app.services.hub.emit({ users: [user.uuid] }, 'user_modify');
      await until(() => ws.events.length === 1, 'the event');
      assert.deepEqual(
        ws.events.map((e) => [e.id, e.event]),
        [[0, 'user_modify']],
      );
      ws.socket.close();
    });

    test('a client that does not read is closed at the buffer bound and resumes with next', async (t) => {
      const app = await buildApp(loadConfig(await testEnv(t, dialect)));
      t.after(() => app.close());
      const port = await listen(app);
      const { client, user } = await loggedInClient(app);
      const ws = connect(port, client.sid);
      await ws.opened;
      // The client stops reading: the kernel's buffers fill, then the server's.
      const raw = (ws.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      raw.pause();
      const server = [...app.services.eventSockets.connections()][0]!;
      let emitted = 0;
      const big = 'x'.repeat(200 * 1024);
      while (server.open() && emitted < 400) {
        app.services.hub.emit({ users: [user.uuid] }, 'object_new', { object: big, n: emitted });
        emitted += 1;
        await app.services.events.idle();
      }
      assert.ok(!server.open(), 'closed before 400 events of 200 KB');
      raw.resume();
      assert.equal(await ws.closed, EVENT_SOCKET_CLOSE_SLOW);
      // What was sent before the close arrives, in order; what comes after is resumed with next.
      assert.deepEqual(
        ws.events.map((e) => e.n),
        Array.from({ length: emitted }, (_, i) => i),
      );
      for (let i = 0; i < 3; i++)
        app.services.hub.emit({ users: [user.uuid] }, 'object_new', { object: 'after', n: emitted + i });
      const resumed = connect(port, client.sid, `?next=${ws.events.at(-1)!.id + 1}`);
      await resumed.opened;
      await until(() => resumed.events.length === 3, 'the events after the close');
      assert.deepEqual(
        resumed.events.map((e) => [e.id, e.n]),
        [0, 1, 2].map((i) => [emitted + i, emitted + i]),
      );
      resumed.socket.close();
    });
  });
}

describe('event channel over WebSocket, two nodes on one PostgreSQL', () => {
  test("an event emitted on the other node reaches the session's socket once, in order, as its long-poll", async (t) => {
    const env = await testEnv(t, 'postgres');
    const a = await buildApp(loadConfig(env));
    t.after(() => a.close());
    const b = await buildApp(loadConfig(env));
    t.after(() => b.close());
    const port = await listen(a);
    const { client, user } = await loggedInClient(a);
    const ws = connect(port, client.sid);
    await ws.opened;
    a.services.hub.emit({ users: [user.uuid] }, 'object_new', { object: 'on a', n: 0 });
    for (let n = 1; n < 4; n++)
      b.services.hub.emit({ users: [user.uuid] }, 'object_new', { object: 'on b', n });
    await until(() => ws.events.length === 4, 'four events, three of them from the other node');
    const polled = (await client.call('GET', '/api/event?next=0&timeout=0')).event as Ev[];
    assert.deepEqual(ws.events, polled);
    assert.deepEqual(
      ws.events.map((e) => [e.id, e.object, e.n]),
      [
        [0, 'on a', 0],
        [1, 'on b', 1],
        [2, 'on b', 2],
        [3, 'on b', 3],
      ],
    );
    ws.socket.close();
  });
});
