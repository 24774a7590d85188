/**
 * The call API without calls (docs/decisions.md "The call API"): the subscription to call events
 * on both databases (only subscribed sessions get them, renewal, expiry, DELETE, a restart), the
 * statuses of bad input, and the empty list. Live calls: src/telephony/calls/call-api-calls.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildUser, Client, DIALECTS, loggedInClient, testEnv } from '../../../test/helper.js';
import { partnerClient } from '../../../test/security-telephony.js';
import { addSipAccount } from '../../../test/sip-peers.js';
import { buildApp } from '../../app.js';
import { SettableClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';

interface Ev {
  id: number;
  event: string;
}

const names = (events: unknown) => (events as Ev[]).map((e) => e.event);
const UUID = '6f1c1a40-0000-1000-8000-000000000000';

for (const dialect of DIALECTS) {
  describe(`call API (${dialect})`, () => {
    test('call events reach only subscribed sessions, until the subscription ends or is deleted', async (t) => {
      const clock = new SettableClock(1_800_000_000_000);
      const env = await testEnv(t, dialect);
      const app = await buildApp(loadConfig(env), undefined, clock);
      t.after(() => app.close());
      const { client, user } = await loggedInClient(app);
      const other = new Client(app);
      await other.login(user.username, user.password);
      const { hub } = app.services;

      // Not subscribed: no call events, other events as ever.
      hub.emit({ users: [user.uuid] }, 'call_update', { call: { uuid: UUID } });
      hub.emit({ users: [user.uuid] }, 'user_modify');
      assert.deepEqual(names((await client.call('GET', '/api/event?next=0&timeout=0')).event), [
        'user_modify',
      ]);

      const subscribed = await client.call('GET', '/api/call/event?timeout=60');
      assert.deepEqual(subscribed, { status: 'ok', expires: 1_800_000_060 });
      hub.emit({ users: [user.uuid] }, 'call_update', { call: { uuid: UUID, state: 'ringing' } });
      hub.emit({ users: [user.uuid] }, 'call_dtmf', { call: UUID, digit: '5' });
      const events = (await client.call('GET', '/api/event?next=1&timeout=0')).event as Ev[];
      assert.deepEqual(names(events), ['call_update', 'call_dtmf']);
      assert.deepEqual((events[0] as unknown as { call: unknown }).call, { uuid: UUID, state: 'ringing' });
      // The user's other session did not subscribe: only user_modify.
      assert.deepEqual(names((await other.call('GET', '/api/event?next=0&timeout=0')).event), [
        'user_modify',
      ]);

      // The subscription ends after its timeout; calling again renews it.
      clock.advance(61_000);
      hub.emit({ users: [user.uuid] }, 'call_update', { call: { uuid: UUID } });
      assert.deepEqual(names((await client.call('GET', '/api/event?next=3&timeout=0')).event), []);
      assert.equal((await client.call('GET', '/api/call/event')).expires, 1_800_000_061 + 3600);
      hub.emit({ users: [user.uuid] }, 'call_update', { call: { uuid: UUID } });
      assert.deepEqual(names((await client.call('GET', '/api/event?next=3&timeout=0')).event), [
        'call_update',
      ]);

      assert.deepEqual(await client.call('DELETE', '/api/call/event'), { status: 'ok' });
      assert.deepEqual(await client.call('DELETE', '/api/call/event'), { status: 'ok' });
      hub.emit({ users: [user.uuid] }, 'call_update', { call: { uuid: UUID } });
      assert.deepEqual(names((await client.call('GET', '/api/event?next=4&timeout=0')).event), []);
    });

    test('the subscription survives a restart of the node', async (t) => {
      const env = await testEnv(t, dialect);
      const first = await buildApp(loadConfig(env));
      const { client, user } = await loggedInClient(first);
      await client.call('GET', '/api/call/event?timeout=600');
      await first.close();
      const second = await buildApp(loadConfig(env));
      t.after(() => second.close());
      const again = new Client(second);
      again.sid = client.sid;
      second.services.hub.emit({ users: [user.uuid] }, 'call_update', { call: { uuid: UUID } });
      assert.deepEqual(names((await again.call('GET', '/api/event?next=0&timeout=0')).event), [
        'call_update',
      ]);
    });

    test('GET /api/call: no calls is an empty list; bad input gets its status and changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      assert.deepEqual(await client.call('GET', '/api/call'), { status: 'ok', call: [] });
      assert.deepEqual(await client.call('GET', `/api/call?order=desc&count=500&start=${UUID}`), {
        status: 'ok',
        call: [],
      });
      for (const query of ['count=0', 'count=501', 'from=10&to=5', 'start=nope', 'order=up', 'from=-1']) {
        assert.equal((await client.call('GET', `/api/call?${query}`)).status, 'wrong-syntax', query);
      }
      for (const query of ['timeout=0', 'timeout=36001', 'timeout=x']) {
        assert.equal((await client.call('GET', `/api/call/event?${query}`)).status, 'wrong-syntax', query);
      }
      // The refused subscriptions changed nothing: still no call events.
      app.services.hub.emit({ users: [user.uuid] }, 'call_update', {});
      assert.deepEqual(names((await client.call('GET', '/api/event?next=0&timeout=0')).event), []);
      assert.equal((await new Client(app).call('GET', '/api/call')).status, 'no-session');
      const anonymous = new Client(app);
      await anonymous.open();
      for (const [method, url] of [
        ['GET', '/api/call'],
        ['GET', '/api/call/event'],
        ['DELETE', '/api/call/event'],
      ] as const) {
        assert.equal((await anonymous.call(method, url)).status, 'no-auth', `${method} ${url}`);
      }
    });

    test('POST /api/call/dial: every status in its order, each changing nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client: partner, partner: p } = await partnerClient(app, ['callfilter']);
      const user = await buildUser(app, { partnerUuid: p.uuid });
      const client = new Client(app);
      await client.login(user.username, user.password);
      const someone = await buildUser(app);
      await addSipAccount(app, 'mine_01', { owner: user.uuid });
      await addSipAccount(app, 'theirs_01', { owner: someone.uuid });
      await app.services.phones.addNumber('+4930111', { userUuid: user.uuid }, false);
      await app.services.phones.addNumber('+4930333', { userUuid: user.uuid });
      await app.services.phones.addNumber('+4930222', { userUuid: someone.uuid });
      const dial = (body: unknown) => client.call('POST', '/api/call/dial', body);
      for (const [body, status] of [
        [{ to: '+4930999' }, 'missing-element'],
        [{ via: 'mine_01' }, 'missing-element'],
        [{ via: 'mine_01', to: '' }, 'wrong-syntax'],
        [{ via: 'mine_01', to: '+4930999', timeout: 4 }, 'wrong-syntax'],
        [{ via: 'mine_01', to: '+4930999', timeout: 181 }, 'wrong-syntax'],
        [{ via: 'mine_01', to: '+4930999', from: 'nope' }, 'wrong-syntax'],
        [{ via: 'mine_01', to: '+4930999', extra: 1 }, 'wrong-syntax'],
        [{ via: 'theirs_01', to: '+4930999', from: 'nope' }, 'wrong-syntax'],
        [{ via: 'theirs_01', to: '+4930999', from: '+4930222' }, 'wrong-sip'],
        [{ via: 'mine_01', to: '+4930999', from: '+4930222' }, 'wrong-phone'],
        [{ via: 'mine_01', to: '+4930999', from: '+4930333' }, 'access-denied'],
        // Telephony is off in these tests: a valid request finds no engine.
        [{ via: 'mine_01', to: '+4930999', from: '+4930111' }, 'illegal-state'],
        [{ via: '+4930555', to: 'theirs_01' }, 'illegal-state'],
      ] as const) {
        assert.equal((await dial(body)).status, status, JSON.stringify(body));
      }
      // The partner's call filter refuses the call API to +49900...: access-denied before the engine.
      const filter = [{ type: 'match', key: '^\\+49900', pass: false }];
      const set = await partner.call('POST', `/api/partner/callfilter/${user.uuid}`, { callfilter: filter });
      assert.equal(set.status, 'ok');
      assert.equal((await dial({ via: 'mine_01', to: '+49900123' })).status, 'access-denied');
      assert.equal((await dial({ via: 'mine_01', to: '+4930999' })).status, 'illegal-state');
      assert.deepEqual(await client.call('GET', '/api/call'), { status: 'ok', call: [] });
      const anonymous = new Client(app);
      await anonymous.open();
      assert.equal(
        (await anonymous.call('POST', '/api/call/dial', { via: 'mine_01', to: '+1' })).status,
        'no-auth',
      );
    });

    test('POST /api/call/{uuid}/control: unknown calls and bad commands get their status', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const control = (uuid: string, body: unknown) => client.call('POST', `/api/call/${uuid}/control`, body);
      assert.equal((await control(UUID, { command: 'hangup' })).status, 'wrong-call');
      assert.equal((await control(UUID, {})).status, 'missing-element');
      assert.equal((await control(UUID, { command: 'explode' })).status, 'wrong-syntax');
      assert.equal((await control(UUID, { command: 'hangup', extra: true })).status, 'wrong-syntax');
      assert.equal((await control(UUID, { command: 'hold', mode: 'recvonly' })).status, 'wrong-syntax');
      assert.equal((await control(UUID, { command: 'dtmf', digits: '12x' })).status, 'wrong-syntax');
      assert.equal((await control(UUID, { command: 'dtmf', digits: '' })).status, 'wrong-syntax');
      assert.equal((await control('not-a-uuid', { command: 'hangup' })).status, 'wrong-syntax');
      // answer, reject, redirect: a cause or target of the wrong form, a redirect without one.
      assert.equal((await control(UUID, { command: 'answer' })).status, 'wrong-call');
      assert.equal((await control(UUID, { command: 'reject', cause: 'busy' })).status, 'wrong-call');
      assert.equal((await control(UUID, { command: 'reject', cause: 'later' })).status, 'wrong-syntax');
      assert.equal((await control(UUID, { command: 'redirect' })).status, 'missing-element');
      assert.equal((await control(UUID, { command: 'redirect', target: {} })).status, 'missing-element');
      for (const target of [
        { sip: 'Not A Sip' },
        { phone: '030123' },
        { ivr: 'x' },
        { dialplan: 7 },
        { sip: 'bob_01', phone: '+4930123' },
        'bob_01',
      ]) {
        const answer = await control(UUID, { command: 'redirect', target });
        assert.equal(answer.status, 'wrong-syntax', JSON.stringify(target));
      }
      assert.equal(
        (await control(UUID, { command: 'redirect', target: { sip: 'bob_01' } })).status,
        'wrong-call',
      );
      const anonymous = new Client(app);
      await anonymous.open();
      assert.equal(
        (await anonymous.call('POST', `/api/call/${UUID}/control`, { command: 'hangup' })).status,
        'no-auth',
      );
    });
  });
}
