import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Answer,
  build,
  buildPartner,
  type Client,
  DIALECTS,
  loggedInClient,
  testEnv,
} from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import { type App, buildApp } from '../../app.js';
import { systemClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';
import { newUuid, nowSeconds } from '../../platform/ids.js';

/** A SIP account row of `owner` (the SIP area's API is another helper's). */
async function addSip(app: App, owner: string, username: string): Promise<void> {
  await app.database.db
    .insertInto('sip_account')
    .values({
      uuid: newUuid(),
      owner,
      username,
      domain: 'sip.zentrale.local',
      password: 'secret',
      ha1: 'x',
      ha1b: 'x',
      description: '',
      created: nowSeconds(systemClock),
    })
    .execute();
}

async function announcement(client: Client): Promise<string> {
  return (await client.call('POST', '/api/announcement', {})).uuid as string;
}

const status = (answer: Answer) => answer.status;

for (const dialect of DIALECTS) {
  describe(`dialplan v2 (${dialect})`, () => {
    test('create, list, get, update, delete; every status (another user: dialplan.security.test.ts)', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: other, user: otherUser } = await loggedInClient(app);
      const ann = await announcement(client);
      const foreignAnn = await announcement(other);
      await addSip(app, user.uuid, 'alice_01');
      await addSip(app, otherUser.uuid, 'bob_01');
      const dialplan = {
        description: 'office',
        ringtone: { announcement: ann, mix: true },
        profiles: [
          { filter: { caller: '^\\+4930' }, linear: { targets: [{ target: 'alice_01', timeout: 20 }] } },
          { play: { announcement: ann } },
        ],
      };
      const created = await client.call('POST', '/api/dialplan/v2', { dialplan });
      assert.equal(created.status, 'ok');
      const uuid = created.uuid as string;
      assert.deepEqual(await client.call('GET', `/api/dialplan/v2/${uuid}`), { status: 'ok', dialplan });
      assert.deepEqual(await client.call('GET', '/api/dialplan/v2'), {
        status: 'ok',
        dialplan: [{ uuid, description: 'office' }],
      });

      for (const [body, expected] of [
        [{}, 'missing-element'],
        [{ dialplan: { profiles: [{ filter: {} }] } }, 'missing-element'],
        [{ dialplan: { profiles: [{ reject: {}, play: { announcement: ann } }] } }, 'wrong-syntax'],
        [{ dialplan: { profiles: [{ filter: { caller: '(' }, reject: {} }] } }, 'wrong-syntax'],
        [{ dialplan: { profiles: [{ filter: { caller: 'x'.repeat(501) }, reject: {} }] } }, 'wrong-syntax'],
        [
          { dialplan: { profiles: [{ filter: { time: { time_zone: 'Mars/Base' } }, reject: {} }] } },
          'wrong-syntax',
        ],
        [
          { dialplan: { profiles: [{ filter: { time: { date: '31.02.2026' } }, reject: {} }] } },
          'wrong-syntax',
        ],
        [{ dialplan: { description: 'x'.repeat(201) } }, 'wrong-syntax'],
        [{ dialplan: { profiles: [{ play: { announcement: foreignAnn } }] } }, 'wrong-announcement'],
        [{ dialplan: { ringtone: { announcement: newUuid() } } }, 'wrong-announcement'],
        [{ dialplan: { profiles: [{ parallel: { targets: ['bob_01'] } }] } }, 'wrong-sip'],
        [{ dialplan: { profiles: [{ cyclic: { targets: [{ target: 'zed_09' }] } }] } }, 'wrong-sip'],
      ] as const) {
        assert.equal(
          status(await client.call('POST', '/api/dialplan/v2', body)),
          expected,
          JSON.stringify(body),
        );
        assert.equal(
          status(await client.call('POST', `/api/dialplan/v2/${uuid}`, body)),
          expected,
          JSON.stringify(body),
        );
      }
      assert.equal(((await client.call('GET', '/api/dialplan/v2')).dialplan as unknown[]).length, 1);
      assert.deepEqual((await client.call('GET', `/api/dialplan/v2/${uuid}`)).dialplan, dialplan);

      const changed = { description: 'home', profiles: [{ reject: {} }] };
      assert.equal(
        status(await client.call('POST', `/api/dialplan/v2/${uuid}`, { dialplan: changed })),
        'ok',
      );
      assert.deepEqual((await client.call('GET', `/api/dialplan/v2/${uuid}`)).dialplan, changed);
      assert.equal(status(await client.call('DELETE', `/api/dialplan/v2/${uuid}`)), 'ok');
      for (const [method, url] of [
        ['GET', `/api/dialplan/v2/${uuid}`],
        ['DELETE', `/api/dialplan/v2/${uuid}`],
        ['POST', `/api/dialplan/v2/${newUuid()}`],
      ] as const) {
        const body = method === 'POST' ? { dialplan: {} } : undefined;
        assert.equal(status(await client.call(method, url, body)), 'wrong-dialplan');
      }
      assert.equal(status(await client.call('GET', '/api/dialplan/v2/not-a-uuid')), 'wrong-syntax');
    });

    test('at most 100 dialplans per user (quota-exceeded); the body is bounded (too-large)', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      for (let i = 0; i < 100; i++) await app.services.dialplans.createDialplan(user.uuid, { dialplan: {} });
      assert.equal(status(await client.call('POST', '/api/dialplan/v2', { dialplan: {} })), 'quota-exceeded');
      const { client: fresh } = await loggedInClient(app);
      const profiles = Array.from({ length: 700 }, () => ({
        filter: { caller: 'x'.repeat(100) },
        reject: {},
      }));
      assert.equal(
        status(await fresh.call('POST', '/api/dialplan/v2', { dialplan: { profiles } })),
        'too-large',
      );
    });

    test('simulate: matching profile, action and trace; anonymous callers; time windows in a zone', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const ann = await announcement(client);
      const dialplan = {
        profiles: [
          { filter: { caller: 'anonymous' }, reject: {} },
          {
            filter: {
              time: {
                weekdays: ['MON', 'TUE', 'WED', 'THU', 'FRI'],
                time_start: '08:00',
                time_end: '17:00',
                time_zone: 'Europe/Berlin',
              },
            },
            parallel: { targets: ['+4930123456'] },
          },
          { filter: { caller: '^\\+49' }, record: { announcement: ann } },
        ],
      };
      const uuid = (await client.call('POST', '/api/dialplan/v2', { dialplan })).uuid as string;
      // Monday 2026-03-02 10:00 in Berlin = 09:00 UTC.
      const monday10 = Date.UTC(2026, 2, 2, 9, 0) / 1000;
      const sim = (body: object) => client.call('POST', `/api/dialplan/v2/${uuid}/simulate`, body);
      const office = await sim({ caller: '+4989111', time: monday10 });
      assert.equal(office.profile, 1);
      assert.deepEqual(office.action, { parallel: { targets: ['+4930123456'] } });
      assert.deepEqual(
        (office.trace as { profile: number; reason: string }[]).map((e) => [e.profile, e.reason]),
        [[0, 'caller']],
      );
      const anonymous = await sim({ caller: 'anonymous', time: monday10 });
      assert.deepEqual([anonymous.profile, anonymous.action, anonymous.trace], [0, { reject: {} }, []]);
      const evening = await sim({ caller: '+4930999', time: monday10 + 10 * 3600 });
      assert.equal(evening.profile, 2);
      const reasons = (evening.trace as { reason: string; detail: string }[]).map((e) => e.reason);
      assert.deepEqual(reasons, ['caller', 'time']);
      assert.match((evening.trace as { detail: string }[])[1]!.detail, /outside 08:00-17:00/);
      const nobody = await sim({ caller: '+1555', time: monday10 + 10 * 3600 });
      assert.deepEqual(Object.keys(nobody).sort(), ['status', 'trace']);
      assert.equal((nobody.trace as unknown[]).length, 3);
      assert.equal(status(await sim({})), 'missing-element');
      assert.equal(status(await sim({ caller: '+49', time: -1 })), 'wrong-syntax');
      assert.equal(status(await sim({ caller: '+49' })), 'ok');
    });

    test('delete removes the dialplan from the numbers it answers (phone_modify)', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      await app.services.phones.addNumber('+4930555001', { userUuid: user.uuid }, false);
      const uuid = (await client.call('POST', '/api/dialplan/v2', { dialplan: {} })).uuid as string;
      assert.equal(
        status(await client.call('POST', '/api/phone', { phone: { '+4930555001': { dialplan: uuid } } })),
        'ok',
      );
      await newEvents(client);
      assert.equal(status(await client.call('DELETE', `/api/dialplan/v2/${uuid}`)), 'ok');
      assert.equal((await newEvents(client, 'phone_modify')).length, 1);
      const phone = (await client.call('GET', '/api/phone')).phone as Record<string, { dialplan?: string }>;
      assert.equal(phone['+4930555001']?.dialplan, undefined);
    });
    test('cyclic round-robin kept in the database: per dialplan and action, modulo the count, over a restart and two nodes, gone with the dialplan', async (t) => {
      const env = await testEnv(t, dialect);
      const first = await buildApp(loadConfig(env));
      let closed = false;
      t.after(() => (closed ? undefined : first.close()));
      const { client, user } = await loggedInClient(first);
      const dialplan = (await client.call('POST', '/api/dialplan/v2', { dialplan: {} })).uuid as string;
      const other = (await client.call('POST', '/api/dialplan/v2', { dialplan: {} })).uuid as string;
      const start = (app: App, action = '0/0', count = 3, uuid = dialplan) =>
        app.services.dialplans.cyclicStart(uuid, action, count);
      assert.deepEqual(
        [await start(first), await start(first), await start(first), await start(first)],
        [0, 1, 2, 0],
      );
      // Another dialplan, or another action of the same, keeps its own position.
      assert.equal(await start(first, '0/0', 3, other), 0);
      assert.equal(await start(first, '1/0'), 0);
      // Fewer targets after an edit: one after the last start, modulo the new count.
      assert.equal(await start(first, '0/0', 2), 1);
      assert.equal(await start(first, '0/0', 0), 0);
      let live = first;
      if (dialect === 'sqlite') {
        // A restart continues where the round-robin was.
        await first.close();
        closed = true;
        live = await buildApp(loadConfig(env));
        t.after(() => live.close());
        assert.equal(await start(live), 2);
      } else {
        // A second node on the same database continues the same round-robin, also when both
        // advance it at once: every call gets its own start.
        const second = await buildApp(loadConfig({ ...env, PUBLIC_URL: 'http://127.0.0.1:18082' }));
        t.after(() => second.close());
        assert.equal(await start(second), 2);
        assert.equal(await start(first), 0);
        const starts = await Promise.all(
          Array.from({ length: 20 }, (_, i) => start(i % 2 === 0 ? first : second, '2/0', 100)),
        );
        assert.deepEqual(
          starts.sort((a, b) => a - b),
          Array.from({ length: 20 }, (_, i) => i),
        );
      }
      // Deleting the dialplan removes its positions.
      const rows = () =>
        live.database.db
          .selectFrom('dialplan_cyclic')
          .select('action')
          .where('dialplan', '=', dialplan)
          .execute();
      assert.notEqual((await rows()).length, 0);
      await live.services.dialplans.deleteDialplan(user.uuid, dialplan);
      assert.deepEqual(await rows(), []);
    });
    test("validation order: the body is judged before wrong-dialplan, also on another user's dialplan", async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const { client: other } = await loggedInClient(app);
      const uuid = (
        await client.call('POST', '/api/dialplan/v2', { dialplan: { profiles: [{ reject: {} }] } })
      ).uuid as string;
      for (const [body, expected] of [
        [{ dialplan: { profiles: [{ reject: {}, play: { announcement: newUuid() } }] } }, 'wrong-syntax'],
        [{ dialplan: { profiles: [{ filter: { caller: '(' }, reject: {} }] } }, 'wrong-syntax'],
        [{ dialplan: { profiles: [{ filter: { caller: 'x' } }] } }, 'missing-element'],
        [{ dialplan: { profiles: [{ pin: { code: '1', onSuccess: [{}] } }] } }, 'missing-element'],
        // A missing action outranks a malformed field anywhere in the body.
        [{ dialplan: { description: 'x'.repeat(201), profiles: [{ filter: {} }] } }, 'missing-element'],
        [
          {
            dialplan: {
              profiles: [
                { play: { announcement: 'nope' } },
                { pin: { code: '1', onSuccess: [{ reject: {} }], onFail: [{ filter: {} }] } },
              ],
            },
          },
          'missing-element',
        ],
      ] as const) {
        for (const [c, url] of [
          [client, `/api/dialplan/v2/${newUuid()}`],
          [other, `/api/dialplan/v2/${uuid}`],
        ] as const) {
          assert.equal(status(await c.call('POST', url, body)), expected, `${url} ${JSON.stringify(body)}`);
        }
      }
      assert.equal(
        status(await other.call('POST', `/api/dialplan/v2/${uuid}`, { dialplan: { profiles: [] } })),
        'wrong-dialplan',
      );
      assert.deepEqual((await client.call('GET', `/api/dialplan/v2/${uuid}`)).dialplan, {
        profiles: [{ reject: {} }],
      });
    });
  });

  describe(`legacy dialplan and call features (${dialect})`, () => {
    test('GET/POST /api/dialplan: every field, pools, empty string deletes, none refused, wrong-*', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: other, user: otherUser } = await loggedInClient(app);
      await addSip(app, user.uuid, 'carl_01');
      await addSip(app, user.uuid, 'carl_02');
      await addSip(app, otherUser.uuid, 'dora_01');
      const ann = await announcement(client);
      assert.deepEqual(await client.call('GET', '/api/dialplan'), { status: 'ok', dialplan: {} });
      const full = {
        announcement: ann,
        mix_ringtone: true,
        action: 'sip',
        phone: '+4930111',
        sip: 'carl_01',
        dial_prefix: '+4930',
        clip_number: '+4930222',
        clir_enable: false,
        cti_via: '+4917033',
        callreverse_enable: true,
        timeout: { timeout: 20, action: 'record' },
        unavailable: { action: 'redirect', phone: '+4930333' },
        busy: { action: 'none', sip: 'carl_02' },
        phone_pool: { add: { '+4930444': true, '+4930555': false } },
        sip_pool: { add: ['carl_01', 'carl_02'] },
      };
      assert.equal(status(await client.call('POST', '/api/dialplan', full)), 'ok');
      const expected = {
        ...full,
        phone_pool: { '+4930444': true, '+4930555': false },
        sip_pool: ['carl_01', 'carl_02'],
      };
      assert.deepEqual((await client.call('GET', '/api/dialplan')).dialplan, expected);

      assert.equal(
        status(
          await client.call('POST', '/api/dialplan', {
            announcement: '',
            phone: '',
            sip: '',
            dial_prefix: '',
            clip_number: '',
            cti_via: '',
            timeout: { timeout: 30 },
            phone_pool: { add: { '+4930555': true }, delete: ['+4930444'] },
            sip_pool: { delete: ['carl_01'] },
          }),
        ),
        'ok',
      );
      const after = (await client.call('GET', '/api/dialplan')).dialplan as Record<string, unknown>;
      for (const key of ['announcement', 'phone', 'sip', 'dial_prefix', 'clip_number', 'cti_via'])
        assert.equal(key in after, false, key);
      assert.deepEqual(after.timeout, { timeout: 30, action: 'record' });
      assert.deepEqual(after.phone_pool, { '+4930555': true });
      assert.deepEqual(after.sip_pool, ['carl_02']);

      for (const [body, expectedStatus] of [
        [{ timeout: { action: 'none' } }, 'wrong-syntax'],
        [{ unavailable: { action: 'none' } }, 'wrong-syntax'],
        [{ action: 'forward' }, 'wrong-syntax'],
        [{ phone: '030' }, 'wrong-syntax'],
        [{ sip: 'Carl' }, 'wrong-syntax'],
        [{ phone_pool: { add: { '0301': true } } }, 'wrong-syntax'],
        [{ mix_ringtone: 'yes' }, 'wrong-syntax'],
        [{ announcement: newUuid() }, 'wrong-announcement'],
        [{ announcement: await announcement(other) }, 'wrong-announcement'],
        [{ sip: 'dora_01' }, 'wrong-sip'],
        [{ busy: { sip: 'dora_01' } }, 'wrong-sip'],
        [{ unavailable: { action: 'sip', sip: 'carl_09' } }, 'wrong-sip'],
        [{ sip_pool: { add: ['dora_01'] } }, 'wrong-sip'],
        [
          {
            phone_pool: {
              add: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`+49301${i + 100}`, true])),
            },
          },
          'too-large',
        ],
      ] as const) {
        assert.equal(
          status(await client.call('POST', '/api/dialplan', body)),
          expectedStatus,
          JSON.stringify(body),
        );
      }
      assert.deepEqual((await client.call('GET', '/api/dialplan')).dialplan, after);
      assert.equal(status(await client.call('POST', '/api/dialplan', { busy: { action: 'none' } })), 'ok');
      // Isolation: the other user's legacy dialplan is their own.
      assert.deepEqual((await other.call('GET', '/api/dialplan')).dialplan, {});
    });

    test('call-through: one pending per user, reset, clear without phone, expiry after two minutes', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { user: otherUser } = await loggedInClient(app);
      const { dialplans } = app.services;
      assert.equal(await dialplans.pendingCallThrough(user.uuid), null);
      assert.equal(
        status(
          await client.call('POST', '/api/dialplan/callthrough', { phone: '+4930111', filter: '+4917099' }),
        ),
        'ok',
      );
      assert.deepEqual(await dialplans.pendingCallThrough(user.uuid), {
        phone: '+4930111',
        filter: '+4917099',
      });
      assert.equal(status(await client.call('POST', '/api/dialplan/callthrough', { phone: 'bob01' })), 'ok');
      assert.deepEqual(await dialplans.pendingCallThrough(user.uuid), { phone: 'bob01' });
      assert.equal(await dialplans.pendingCallThrough(user.uuid, nowSeconds(systemClock) + 121), null);
      assert.equal(await dialplans.pendingCallThrough(otherUser.uuid), null);
      assert.equal(status(await client.call('POST', '/api/dialplan/callthrough', {})), 'ok');
      assert.equal(await dialplans.pendingCallThrough(user.uuid), null);
      for (const body of [{ phone: 'a' }, { phone: '+12' }, { phone: '+4930111', filter: 'x' }]) {
        assert.equal(status(await client.call('POST', '/api/dialplan/callthrough', body)), 'wrong-syntax');
      }
    });

    test("callback: access-denied when the partner's call filter refuses it; nothing recorded", async (t) => {
      const app = await build(t, { dialect });
      const partner = await buildPartner(app);
      await app.services.partners.setRights(partner.uuid, ['phone', 'callfilter']);
      const { client, user } = await loggedInClient(app, { partnerUuid: partner.uuid });
      const { phones, dialplans, callFilters } = app.services;
      await phones.addNumber('+4930710001', { userUuid: user.uuid }, false);
      await phones.setSwitches('+4930710001', { dialplan_enable: true });
      await client.call('POST', '/api/dialplan', { cti_via: '+4917011' });
      const callback = (to: string) =>
        client.call('POST', '/api/dialplan/callback', { from: '+4930710001', to });

      await callFilters.setFilter(partner.uuid, user.uuid, [
        { type: 'service', key: 'callback', pass: false },
      ]);
      assert.equal(status(await callback('+4989123')), 'access-denied');
      assert.equal(await dialplans.findCallbackRequest(user.uuid), undefined);

      await callFilters.setFilter(partner.uuid, user.uuid, [{ type: 'match', key: '^\\+4989', pass: false }]);
      assert.equal(status(await callback('+4989123')), 'access-denied');
      assert.equal(await dialplans.findCallbackRequest(user.uuid), undefined);
      assert.equal(status(await callback('+4930999')), 'ok');
      assert.equal((await dialplans.findCallbackRequest(user.uuid))?.to_phone, '+4930999');
    });

    test('callback: wrong-phone, access-denied, no-via, recorded; callreverse: no-callreverse until signalled', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: other, user: otherUser } = await loggedInClient(app);
      const { phones, dialplans } = app.services;
      await phones.addNumber('+4930700001', { userUuid: user.uuid });
      await phones.addNumber('+4930700002', { userUuid: otherUser.uuid }, false);
      await phones.setSwitches('+4930700002', { dialplan_enable: true });
      const callback = (c: Client, from: string) =>
        c.call('POST', '/api/dialplan/callback', { from, to: '+4989123' });
      assert.equal(status(await callback(client, '+4930700002')), 'wrong-phone');
      assert.equal(status(await callback(client, '+4930799999')), 'wrong-phone');
      assert.equal(status(await callback(client, '+4930700001')), 'wrong-phone'); // dialplan_enable unset
      await phones.setSwitches('+4930700001', { dialplan_enable: true });
      assert.equal(status(await callback(client, '+4930700001')), 'access-denied'); // locked
      await phones.setLocked('+4930700001', false);
      assert.equal(status(await callback(client, '+4930700001')), 'no-via');
      await client.call('POST', '/api/dialplan', {
        cti_via: '+4917011',
        clip_number: '+4930700001',
        clir_enable: true,
      });
      assert.equal(await dialplans.findCallbackRequest(user.uuid), undefined);
      assert.equal(status(await callback(client, '+4930700001')), 'ok');
      const recorded = await dialplans.findCallbackRequest(user.uuid);
      assert.deepEqual(
        { ...recorded, created: 0 },
        {
          user_uuid: user.uuid,
          from_phone: '+4930700001',
          to_phone: '+4989123',
          via: '+4917011',
          clip_number: '+4930700001',
          clir: 1,
          created: 0,
        },
      );
      assert.equal(status(await callback(other, '+4930700002')), 'no-via');
      assert.equal(
        status(await client.call('POST', '/api/dialplan/callback', { from: '+4930700001' })),
        'missing-element',
      );

      const reverse = (c: Client) => c.call('POST', '/api/dialplan/callreverse', { filter: '+4930123' });
      assert.equal(status(await reverse(client)), 'no-callreverse');
      await app.services.writer.write((w) =>
        dialplans.startCallReverse(w, user.uuid, '+4989123', '+4930700001'),
      );
      assert.equal(status(await reverse(other)), 'no-callreverse');
      assert.equal(status(await reverse(client)), 'ok');
      assert.equal((await dialplans.findCallReverse(user.uuid))?.filter, '+4930123');
      assert.equal(
        status(await client.call('POST', '/api/dialplan/callreverse', { filter: 'x' })),
        'wrong-syntax',
      );
      await app.services.writer.write((w) =>
        dialplans.stopCallReverse(w, user.uuid, '+4989123', '+4930700001'),
      );
      assert.equal(status(await reverse(client)), 'no-callreverse');

      // Where the caller waits, for another node: the join token is stored sealed, read back in
      // clear; the end of an older process (another caller's leg) leaves the newer one joinable.
      const holder = { leg: 'leg-2', address: '127.0.0.1:5071', token: 'join-token-2' };
      await app.services.writer.write((w) =>
        dialplans.startCallReverse(w, user.uuid, '+4989123', '+4930700001', holder),
      );
      const stored = await app.database.db
        .selectFrom('callreverse')
        .select('token')
        .where('user_uuid', '=', user.uuid)
        .executeTakeFirstOrThrow();
      assert.match(stored.token ?? '', /^sealed:v1:/);
      assert.doesNotMatch(stored.token ?? '', /join-token-2/);
      assert.deepEqual((await dialplans.findCallReverse(user.uuid))?.holder, holder);
      await app.services.writer.write((w) =>
        dialplans.stopCallReverse(w, user.uuid, '+4989123', '+4930700001', 'leg-1'),
      );
      assert.equal(status(await reverse(client)), 'ok');
      await app.services.writer.write((w) =>
        dialplans.stopCallReverse(w, user.uuid, '+4989123', '+4930700001', 'leg-2'),
      );
      assert.equal(status(await reverse(client)), 'no-callreverse');
    });
  });
}
