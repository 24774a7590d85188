import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import {
  build,
  buildPartner,
  buildUser,
  Client,
  DIALECTS,
  heldLongPoll,
  loggedInClient,
} from '../../../test/helper.js';
import { deleteUserSessions, listSessionIds, updateSession } from './session.repository.js';

for (const dialect of DIALECTS) {
  describe(`session (${dialect})`, () => {
    test('GET /api/session creates a session with cookies and re-uses it by header, cookie or parameter', async (t) => {
      const app = await build(t, { dialect });
      const created = await app.server.inject({ method: 'GET', url: '/api/session?language=en' });
      const body = created.json();
      assert.equal(body.status, 'ok');
      assert.equal(body.auth, false);
      assert.equal(body.next_event, 0);
      assert.equal(body.server, 'http://127.0.0.1:8080');
      assert.match(body.sid, /^[A-Za-z0-9_-]{40,}$/);
      assert.notEqual(body.sid, body.did);
      const cookies = Object.fromEntries(created.cookies.map((c) => [c.name, c.value]));
      assert.equal(cookies.sid, body.sid);
      assert.equal(cookies.server, body.server);

      for (const request of [
        { headers: { authorization: `Bearer ${body.sid}` } },
        { cookies: { sid: body.sid } },
        { query: { sid: body.sid } },
      ]) {
        const again = (await app.server.inject({ method: 'GET', url: '/api/session', ...request })).json();
        assert.equal(again.sid, body.sid);
        assert.equal(again.did, body.did);
      }
    });

    test('the Bearer header wins over cookie and parameter', async (t) => {
      const app = await build(t, { dialect });
      const a = (await app.server.inject('/api/session')).json();
      const b = (await app.server.inject('/api/session')).json();
      const answer = await app.server.inject({
        method: 'GET',
        url: `/api/session?sid=${a.sid}`,
        headers: { authorization: `Bearer ${b.sid}` },
        cookies: { sid: a.sid },
      });
      assert.equal(answer.json().sid, b.sid);
    });

    test('an unknown sid is wrong-session and deletes the cookies', async (t) => {
      const app = await build(t, { dialect });
      const answer = await app.server.inject({
        method: 'GET',
        url: '/api/session',
        cookies: { sid: 'nope' },
      });
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.json().status, 'wrong-session');
      const cleared = answer.cookies.find((c) => c.name === 'sid');
      assert.ok(cleared && cleared.value === '');
    });

    test('user login by username or e-mail, wrong-credentials, already-auth', async (t) => {
      const app = await build(t, { dialect });
      const user = await buildUser(app);
      const client = new Client(app);
      await client.open();
      assert.equal(
        (await client.call('POST', '/api/session', { username: user.username, password: 'wrong-pw' })).status,
        'wrong-credentials',
      );
      assert.equal(
        (await client.call('POST', '/api/session', { username: 'nobody', password: 'secret-pw' })).status,
        'wrong-credentials',
      );
      const ok = await client.call('POST', '/api/session', {
        username: user.username.toUpperCase(),
        password: user.password,
      });
      assert.deepEqual(ok, { status: 'ok' });
      assert.equal((await client.call('GET', '/api/session')).auth, true);
      assert.equal(
        (await client.call('POST', '/api/session', { username: user.username, password: user.password }))
          .status,
        'already-auth',
      );

      const other = new Client(app);
      await other.open();
      assert.equal(
        (
          await other.call('POST', '/api/session', {
            email: user.email!.toUpperCase(),
            password: user.password,
          })
        ).status,
        'ok',
      );
    });

    test('repeated wrong passwords throttle that login name, even with the right password', async (t) => {
      const app = await build(t, { dialect });
      const user = await buildUser(app);
      const other = await buildUser(app);
      const client = new Client(app);
      await client.open();
      for (let i = 0; i < 10; i++) {
        const answer = await client.call('POST', '/api/session', {
          username: user.username,
          password: 'wrong-pw',
        });
        assert.equal(answer.status, 'wrong-credentials');
      }
      const blocked = await client.call('POST', '/api/session', {
        username: user.username,
        password: user.password,
      });
      assert.equal(blocked.status, 'resource-throttle');
      assert.equal((await client.call('GET', '/api/session')).auth, false);
      assert.equal(
        (await client.call('POST', '/api/session', { username: other.username, password: other.password }))
          .status,
        'ok',
      );
    });

    test('login without a session creates an authenticated session', async (t) => {
      const app = await build(t, { dialect });
      const user = await buildUser(app);
      const answer = await app.server.inject({
        method: 'POST',
        url: '/api/session',
        payload: { username: user.username, password: user.password },
      });
      const body = answer.json();
      assert.equal(body.status, 'ok');
      assert.equal(body.auth, true);
      assert.ok(answer.cookies.some((c) => c.name === 'sid' && c.value === body.sid));
      const again = (
        await app.server.inject({ url: '/api/session', headers: { authorization: `Bearer ${body.sid}` } })
      ).json();
      assert.equal(again.auth, true);
    });

    test('partner login, partner proxy login and wrong-user', async (t) => {
      const app = await build(t, { dialect });
      const partner = await buildPartner(app, 'acme');
      const own = await buildUser(app, { partnerUuid: partner.uuid });
      const stranger = await buildUser(app);

      const client = new Client(app);
      await client.open();
      assert.equal(
        (await client.call('POST', '/api/session', { partner: 'acme', key: 'bad-key' })).status,
        'wrong-credentials',
      );
      assert.deepEqual(await client.call('POST', '/api/session', { partner: 'acme', key: partner.key }), {
        status: 'ok',
      });
      const described = await client.call('GET', '/api/session');
      assert.equal(described.auth, true);
      assert.equal(described.partner, 'acme');

      const proxy = new Client(app);
      await proxy.open();
      assert.equal(
        (await proxy.call('POST', '/api/session', { partner: 'acme', key: partner.key, user: stranger.uuid }))
          .status,
        'wrong-user',
      );
      assert.deepEqual(
        await proxy.call('POST', '/api/session', { partner: 'acme', key: partner.key, user: own.uuid }),
        {
          status: 'ok',
          partner: 'acme',
        },
      );

      const direct = new Client(app);
      await direct.open();
      assert.deepEqual(
        await direct.call('POST', '/api/session', { username: own.username, password: own.password }),
        {
          status: 'ok',
          partner: 'acme',
        },
      );
    });

    test('partner login needs a session; missing elements come before credentials', async (t) => {
      const app = await build(t, { dialect });
      await buildPartner(app, 'solo');
      const bare = await app.server.inject({
        method: 'POST',
        url: '/api/session',
        payload: { partner: 'solo', key: 'partner-key' },
      });
      assert.equal(bare.json().status, 'no-session');
      const client = new Client(app);
      await client.open();
      assert.equal(
        (await client.call('POST', '/api/session', { partner: 'solo' })).status,
        'missing-element',
      );
      assert.equal(
        (await client.call('POST', '/api/session', { username: 'someone' })).status,
        'missing-element',
      );
      assert.equal((await client.call('POST', '/api/session', {})).status, 'missing-element');
      assert.equal(
        (await client.call('POST', '/api/session', { username: 'a', password: 'secret' })).status,
        'wrong-syntax',
      );
      assert.equal(
        (await client.call('POST', '/api/session', { username: 42, password: 'secret' })).status,
        'wrong-syntax',
      );
    });

    test('DELETE /api/session closes the session for good', async (t) => {
      const app = await build(t, { dialect });
      const client = new Client(app);
      await client.open();
      assert.deepEqual(await client.call('DELETE', '/api/session'), { status: 'ok' });
      assert.equal((await client.call('DELETE', '/api/session')).status, 'no-session');
      assert.equal((await client.call('GET', '/api/session')).status, 'wrong-session');
    });

    test('sessions survive a restart of their node', async (t) => {
      const { loadConfig } = await import('../../platform/config.js');
      const { buildApp } = await import('../../app.js');
      const { testEnv } = await import('../../../test/helper.js');
      const config = loadConfig(await testEnv(t, dialect));
      const first = await buildApp(config);
      const user = await buildUser(first);
      const client = new Client(first);
      await client.login(user.username, user.password);
      first.services.hub.emit({ users: [user.uuid] }, 'user_modify');
      await first.close();

      const second = await buildApp(config);
      t.after(() => second.close());
      const resumed = new Client(second);
      resumed.sid = client.sid;
      const session = await resumed.call('GET', '/api/session');
      assert.equal(session.auth, true);
      assert.equal(session.next_event, 1);
      const events = await resumed.call('GET', '/api/event?next=0&timeout=0');
      assert.deepEqual(
        (events.event as { id: number; event: string }[]).map((e) => [e.id, e.event]),
        [[0, 'user_modify']],
      );
    });

    test('a session of another node is no-session here', async (t) => {
      const { loadConfig } = await import('../../platform/config.js');
      const { buildApp } = await import('../../app.js');
      const { testEnv } = await import('../../../test/helper.js');
      const env = await testEnv(t, dialect);
      const nodeA = await buildApp(loadConfig(env));
      const client = new Client(nodeA);
      await client.open();
      await nodeA.close();
      const nodeB = await buildApp(loadConfig({ ...env, PUBLIC_URL: 'http://127.0.0.2:8080' }));
      t.after(() => nodeB.close());
      const foreign = new Client(nodeB);
      foreign.sid = client.sid;
      assert.equal((await foreign.call('DELETE', '/api/session')).status, 'no-session');
    });

    test("closing a user's sessions ends all of them and answers their long-polls", async (t) => {
      const app = await build(t, { dialect });
      const { client: first, user } = await loggedInClient(app);
      const second = new Client(app);
      await second.login(user.username, user.password);
      const { client: bystander } = await loggedInClient(app);
      const held = (await heldLongPoll(second)).answer;
      await app.services.sessions.closeUserSessions(user.uuid);
      assert.deepEqual((await held).event, []);
      assert.equal((await first.call('GET', '/api/session')).status, 'wrong-session');
      assert.equal((await second.call('GET', '/api/session')).status, 'wrong-session');
      assert.equal((await bystander.call('GET', '/api/session')).auth, true);
    });

    /** A session of a node whose sessions expire after a minute of idleness. */
    const minuteSession = async (t: TestContext) => {
      const app = await build(t, { dialect, env: { SESSION_IDLE_TIMEOUT: '60' } });
      const client = new Client(app);
      await client.open();
      return { app, client, session: app.services.sessions.findBySid(client.sid!)! };
    };

    test('a node closes its sessions whose rows another process deleted, at its next flush', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const bystander = new Client(app);
      await bystander.open();
      const held = (await heldLongPoll(client)).answer;
      // What the operator tool does when it disables a user, with no bus to this node.
      await deleteUserSessions(app.database.db, user.uuid);
      await app.services.sessions.flushActivity();
      assert.deepEqual((await held).event, []);
      assert.equal((await client.call('GET', '/api/session')).status, 'wrong-session');
      assert.equal((await bystander.call('GET', '/api/session')).status, 'ok');
    });

    test('a session used since its row was written is not idle at the flush', async (t) => {
      const { app, client, session } = await minuteSession(t);
      // Its row was last written 61 s ago; it has been used since (not written yet).
      await updateSession(app.database.db, session.did, { last_seen: Date.now() - 61_000 });
      session.lastSeen = Date.now();
      await app.services.sessions.flushActivity();
      assert.ok((await listSessionIds(app.database.db, app.config.publicUrl)).includes(session.did));
      assert.equal((await client.call('GET', '/api/session')).status, 'ok');
    });

    test('idle sessions expire', async (t) => {
      const { client, session } = await minuteSession(t);
      session.lastSeen = Date.now() - 61_000;
      assert.equal((await client.call('DELETE', '/api/session')).status, 'no-session');
    });
  });
}

describe('session limits', () => {
  test('more new sessions per address and minute than SESSION_RATE_LIMIT are resource-throttle', async (t) => {
    const app = await build(t, { env: { SESSION_RATE_LIMIT: '3' } });
    const statuses: string[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await app.server.inject('/api/session')).json().status);
    assert.deepEqual(statuses, ['ok', 'ok', 'ok', 'resource-throttle', 'resource-throttle']);
    const other = await app.server.inject({ url: '/api/session', remoteAddress: '10.0.0.9' });
    assert.equal(other.json().status, 'ok');
  });

  test('language must be a language identifier', async (t) => {
    const app = await build(t);
    assert.equal((await app.server.inject('/api/session?language=fr')).json().status, 'wrong-syntax');
    assert.equal((await app.server.inject('/api/language')).json().language.join(), 'de,en');
  });
});
