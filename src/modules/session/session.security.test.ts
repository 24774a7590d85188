/**
 * Sessions as an attacker and a spec-only client see them: the generic status order for bodies
 * with alternatives, events only for authenticated sessions, the Origin rule on every call of
 * a session, and session fixation through a planted cookie.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildUser, Client } from '../../../test/helper.js';
import type { App } from '../../app.js';

describe('missing-element comes before wrong-syntax in bodies with alternatives', () => {
  test('POST /api/session, /api/password/recovery, /api/password, /api/user/invitation', async (t) => {
    const app = await build(t);
    const client = new Client(app);
    await client.open();
    const cases: [string, unknown, string][] = [
      ['/api/session', { username: 'a' }, 'missing password'],
      ['/api/session', { password: 'x' }, 'missing username'],
      ['/api/session', { partner: 'p', password: 'x' }, 'missing key'],
      ['/api/session', { key: 'k' }, 'missing partner'],
      ['/api/password/recovery', { captcha: '!!' }, 'missing username'],
      ['/api/password', { code: '!', password: 'x' }, 'missing username'],
      ['/api/signup/verification', { captcha: '!!' }, 'missing email'],
      ['/api/signup/verification', { email: 'not-an-email' }, 'missing captcha'],
    ];
    for (const [url, body, message] of cases) {
      const answer = await client.call('POST', url, body);
      assert.deepEqual([answer.status, answer.message], ['missing-element', message], url);
    }
    // Complete but malformed: wrong-syntax.
    assert.equal(
      (await client.call('POST', '/api/session', { username: 'a', password: 'secret' })).status,
      'wrong-syntax',
    );
    assert.equal(
      (await client.call('POST', '/api/signup/verification', { email: 'x@example.com', captcha: '!!' }))
        .status,
      'wrong-syntax',
    );
    const user = await buildUser(app);
    await client.login(user.username, user.password);
    const invitation = await client.call('POST', '/api/user/invitation', {});
    assert.deepEqual([invitation.status, invitation.message], ['missing-element', 'missing username']);
  });
});

test('GET /api/event needs an authenticated session', async (t) => {
  const app = await build(t);
  const client = new Client(app);
  await client.open();
  assert.equal((await client.call('GET', '/api/event?timeout=0')).status, 'no-auth');
  const user = await buildUser(app);
  await client.call('POST', '/api/session', { username: user.username, password: user.password });
  assert.equal((await client.call('GET', '/api/event?timeout=0')).status, 'ok');
});

test('the Origin rule covers calls that need no authentication: a login from another origin changes nothing', async (t) => {
  const app = await build(t);
  const user = await buildUser(app);
  const client = new Client(app, { origin: 'https://app.example' });
  await client.open();
  const foreign = new Client(app, { origin: 'https://evil.example' });
  foreign.sid = client.sid;
  const answer = await foreign.call('POST', '/api/session', {
    username: user.username,
    password: user.password,
  });
  assert.equal(answer.status, 'wrong-origin');
  assert.equal((await foreign.call('GET', '/api/session')).status, 'wrong-origin');
  // The session is still unauthenticated for its own origin.
  assert.equal((await client.call('GET', '/api/session')).auth, false);
});

describe('session fixation', () => {
  test('a cookie session moves to a new sid when it logs in; the planted sid ends', async (t) => {
    const app = await build(t);
    const user = await buildUser(app);
    // The attacker makes a session and plants its sid in the victim's browser as a cookie.
    const planted = (await app.server.inject({ method: 'GET', url: '/api/session' })).json().sid as string;
    const login = await app.server.inject({
      method: 'POST',
      url: '/api/session',
      headers: { cookie: `sid=${planted}`, 'content-type': 'application/json' },
      payload: { username: user.username, password: user.password },
    });
    assert.equal(login.json().status, 'ok');
    const cookie = login.cookies.find((c) => c.name === 'sid');
    assert.ok(cookie && cookie.value !== planted, 'a new sid cookie');
    // The victim's browser goes on with the new cookie; the attacker's sid is gone.
    const victim = await app.server.inject({
      method: 'GET',
      url: '/api/user',
      headers: { cookie: `sid=${cookie.value}` },
    });
    assert.equal(victim.json().status, 'ok');
    const attacker = await app.server.inject({
      method: 'GET',
      url: '/api/user',
      headers: { authorization: `Bearer ${planted}` },
    });
    assert.equal(attacker.json().status, 'no-session');
  });

  test('a Bearer client keeps the sid it chose', async (t) => {
    const app = await build(t);
    const user = await buildUser(app);
    const client = new Client(app);
    await client.open();
    const sid = client.sid;
    const answer = await app.server.inject({
      method: 'POST',
      url: '/api/session',
      headers: { authorization: `Bearer ${sid}`, 'content-type': 'application/json' },
      payload: { username: user.username, password: user.password },
    });
    assert.equal(answer.json().status, 'ok');
    assert.equal(
      answer.cookies.find((c) => c.name === 'sid'),
      undefined,
    );
    assert.equal((await client.call('GET', '/api/user')).status, 'ok');
  });
});

describe('login throttling', () => {
  /** A login without a session from a client address; answers the status. */
  const loginFrom = async (app: App, address: string, body: Record<string, string>) =>
    (
      await app.server.inject({
        method: 'POST',
        url: '/api/session',
        remoteAddress: address,
        headers: { 'content-type': 'application/json' },
        payload: body,
      })
    ).json().status as string;

  test('wrong passwords make the account back off, not lock; a known client is not affected', async (t) => {
    const app = await build(t, { env: { SESSION_RATE_LIMIT: '0' } });
    const user = await buildUser(app);
    const right = { username: user.username, password: user.password };
    assert.equal(await loginFrom(app, '10.0.0.1', right), 'ok');
    // Someone else guesses, from many addresses.
    for (let i = 0; i < 10; i++)
      assert.equal(
        await loginFrom(app, `10.9.0.${i}`, { username: user.username, password: 'wrong-pw' }),
        'wrong-credentials',
      );
    // The owner's usual client logs in at once.
    assert.equal(await loginFrom(app, '10.0.0.1', right), 'ok');
    // A new client waits out the back-off, then the right password works.
    for (let i = 0; i < 10; i++)
      await loginFrom(app, `10.9.1.${i}`, { username: user.username, password: 'wrong-pw' });
    assert.equal(await loginFrom(app, '10.0.0.2', right), 'resource-throttle');
    await app.database.db
      .updateTable('throttle')
      .set((eb) => ({ window_start: eb('window_start', '-', 20) }))
      .where('scope', '=', 'login-account')
      .execute();
    assert.equal(await loginFrom(app, '10.0.0.2', right), 'ok');
  });

  test('user name and e-mail count against the same account', async (t) => {
    const app = await build(t, { env: { SESSION_RATE_LIMIT: '0' } });
    const user = await buildUser(app);
    for (let i = 0; i < 5; i++) {
      await loginFrom(app, '10.1.0.1', { username: user.username, password: 'wrong-pw' });
      await loginFrom(app, '10.1.0.1', { email: user.email!.toUpperCase(), password: 'wrong-pw' });
    }
    assert.equal(
      await loginFrom(app, '10.1.0.2', { email: user.email!, password: user.password }),
      'resource-throttle',
    );
  });

  test('an address that guesses too much is refused; other addresses are not', async (t) => {
    const app = await build(t, { env: { SESSION_RATE_LIMIT: '0' } });
    const user = await buildUser(app);
    for (let i = 0; i < 50; i++)
      assert.equal(
        await loginFrom(app, '10.2.0.1', { username: `nobody${i}`, password: 'wrong-pw' }),
        'wrong-credentials',
      );
    const right = { username: user.username, password: user.password };
    assert.equal(await loginFrom(app, '10.2.0.1', right), 'resource-throttle');
    assert.equal(await loginFrom(app, '10.2.0.2', right), 'ok');
  });
});

describe('behind a reverse proxy (TRUST_PROXY)', () => {
  test('with TRUST_PROXY the per-address limit sees the forwarded client; without it every client is the proxy', async (t) => {
    const fromProxy = (app: Awaited<ReturnType<typeof build>>, client: string) =>
      app.server.inject({
        url: '/api/session',
        remoteAddress: '10.0.0.1',
        headers: { 'x-forwarded-for': client },
      });
    const trusting = await build(t, { env: { SESSION_RATE_LIMIT: '2', TRUST_PROXY: '10.0.0.1' } });
    const statuses: string[] = [];
    for (const client of ['192.0.2.1', '192.0.2.1', '192.0.2.1', '192.0.2.2'])
      statuses.push((await fromProxy(trusting, client)).json().status);
    assert.deepEqual(statuses, ['ok', 'ok', 'resource-throttle', 'ok']);

    const plain = await build(t, { env: { SESSION_RATE_LIMIT: '2' } });
    const shared: string[] = [];
    for (const client of ['192.0.2.1', '192.0.2.2', '192.0.2.3'])
      shared.push((await fromProxy(plain, client)).json().status);
    assert.deepEqual(shared, ['ok', 'ok', 'resource-throttle']);
  });
});
