/**
 * Spec "SIP accounts" through the API on both databases: every status of every route,
 * quota from the feature packs, events. Registrations are written into
 * the `location` table as Kamailio would (the engines are off here; sip.registration.test.ts
 * registers for real).
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { build, type Client, DIALECTS, type Dialect, loggedInClient } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import { registerSipAccount as register } from '../../../test/security-telephony.js';
import type { App } from '../../app.js';
import { systemClock } from '../../platform/clock.js';
import { newUuid, nowSeconds } from '../../platform/ids.js';
import { loadSecretBox } from '../../platform/sealing.js';
import { sipDigests } from '../../telephony/index.js';
import { BLF_LIMIT, defaultSipDomain, SipService } from './index.js';

async function locations(app: App, user: string): Promise<number> {
  const rows = await app.database.db
    .selectFrom('location')
    .select('id')
    .where('username', '=', user)
    .execute();
  return rows.length;
}

async function accounts(client: Client) {
  const answer = await client.call('GET', '/api/sip');
  assert.equal(answer.status, 'ok');
  return answer.sip as Record<string, Record<string, unknown>>;
}

async function setup(t: TestContext, dialect: Dialect) {
  const app = await build(t, { dialect });
  const alice = await loggedInClient(app, {
    username: `Alice${process.pid % 1000}x${Math.floor(Math.random() * 1e6)}`,
  });
  const bob = await loggedInClient(app);
  return { app, alice, bob, name: alice.user.username.toLowerCase() };
}

test('the default domain by creation date: legacy before 2016-01-01 UTC, current from then on', () => {
  const config = { sipDomainLegacy: 'old.example', sipDomainCurrent: 'new.example' };
  const newYear2016 = Date.UTC(2016, 0, 1) / 1000;
  assert.equal(defaultSipDomain(newYear2016 - 1, config), 'old.example');
  assert.equal(defaultSipDomain(newYear2016, config), 'new.example');
  assert.equal(defaultSipDomain(Math.floor(Date.now() / 1000), config), 'new.example');
});

for (const dialect of DIALECTS) {
  describe(`SIP accounts (${dialect})`, () => {
    test('POST /api/sip: names from 01, default and chosen domain, validation, quota from the packs, sip_new', async (t) => {
      const { app, alice, name } = await setup(t, dialect);
      const { client } = alice;
      const current = app.config.sipDomainCurrent;
      const legacy = app.config.sipDomainLegacy;
      await newEvents(client);

      const first = await client.call('POST', '/api/sip', { password: 'secret1', description: 'desk' });
      assert.deepEqual(first, { status: 'ok', user: `${name}_01`, domain: current });
      const second = await client.call('POST', '/api/sip', { password: 'secret2', domain: legacy });
      assert.deepEqual(second, { status: 'ok', user: `${name}_02`, domain: legacy });
      // feature.used counts them against quota.sip.
      assert.equal(
        ((await client.call('GET', '/api/user')).user as { feature: { used: { sip: number } } }).feature.used
          .sip,
        2,
      );
      assert.deepEqual(
        (await newEvents(client, 'sip_new')).map(({ user, domain, description }) => ({
          user,
          domain,
          description,
        })),
        [
          { user: `${name}_01`, domain: current, description: 'desk' },
          { user: `${name}_02`, domain: legacy, description: '' },
        ],
      );
      // Kamailio's digests match the password and the domain.
      const row = await app.database.db
        .selectFrom('sip_account')
        .selectAll()
        .where('username', '=', `${name}_02`)
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ha1: row.ha1, ha1b: row.ha1b }, sipDigests(`${name}_02`, legacy, 'secret2'));

      for (const [body, status] of [
        [{}, 'missing-element'],
        [{ password: 'four' }, 'wrong-syntax'],
        [{ password: 'x'.repeat(51) }, 'wrong-syntax'],
        [{ password: 12345 }, 'wrong-syntax'],
        [{ password: 'secret', description: 'd'.repeat(101) }, 'wrong-syntax'],
        [{ password: 'secret', domain: 'sip.example.com' }, 'wrong-domain'],
      ] as const) {
        assert.equal((await client.call('POST', '/api/sip', body)).status, status, JSON.stringify(body));
      }
      assert.equal(Object.keys(await accounts(client)).length, 2, 'failed calls created nothing');

      // The default pack allows 5.
      for (const n of [3, 4, 5]) {
        assert.equal((await client.call('POST', '/api/sip', { password: 'secret' })).user, `${name}_0${n}`);
      }
      assert.equal((await client.call('POST', '/api/sip', { password: 'secret' })).status, 'quota-exceeded');
      // A freed number is taken again first.
      assert.equal((await client.call('DELETE', `/api/sip/${name}_02`)).status, 'ok');
      assert.equal((await client.call('POST', '/api/sip', { password: 'secret' })).user, `${name}_02`);
      // A bigger pack raises the quota.
      await app.services.features.createPack('phones', { quota: { sip: 1 } });
      await app.services.features.assignPack(alice.user.uuid, 'phones');
      assert.equal((await client.call('POST', '/api/sip', { password: 'secret' })).user, `${name}_06`);
      assert.equal((await client.call('POST', '/api/sip', { password: 'secret' })).status, 'quota-exceeded');
    });

    test('passwords are stored sealed, GET answers them in clear; clear rows from before are sealed at start', async (t) => {
      const { app, alice, name } = await setup(t, dialect);
      const { client } = alice;
      const user = `${name}_01`;
      await client.call('POST', '/api/sip', { password: 'first-secret' });
      const stored = async (username: string) =>
        (
          await app.database.db
            .selectFrom('sip_account')
            .select(['password', 'ha1', 'ha1b', 'domain'])
            .where('username', '=', username)
            .executeTakeFirstOrThrow()
        ).password;
      assert.match(await stored(user), /^sealed:v1:/);
      assert.doesNotMatch(await stored(user), /first-secret/);
      assert.equal((await accounts(client))[user]?.password, 'first-secret');
      // A domain change alone keeps the password and rewrites the digests from it.
      const legacy = app.config.sipDomainLegacy;
      assert.equal((await client.call('POST', `/api/sip/${user}`, { domain: legacy })).status, 'ok');
      const row = await app.database.db
        .selectFrom('sip_account')
        .select(['password', 'ha1', 'ha1b'])
        .where('username', '=', user)
        .executeTakeFirstOrThrow();
      assert.match(row.password, /^sealed:v1:/);
      assert.deepEqual({ ha1: row.ha1, ha1b: row.ha1b }, sipDigests(user, legacy, 'first-secret'));
      assert.equal((await accounts(client))[user]?.password, 'first-secret');

      // A row written in clear (before sealing): readable, and sealed by the start.
      const old = `${name}_02`;
      await app.database.db
        .insertInto('sip_account')
        .values({
          uuid: newUuid(),
          owner: alice.user.uuid,
          username: old,
          domain: app.config.sipDomainCurrent,
          password: 'clear-secret',
          ...sipDigests(old, app.config.sipDomainCurrent, 'clear-secret'),
          description: '',
          created: nowSeconds(systemClock),
        })
        .execute();
      assert.equal((await accounts(client))[old]?.password, 'clear-secret');
      await app.services.sip.sealClearPasswords();
      assert.match(await stored(old), /^sealed:v1:/);
      assert.equal((await accounts(client))[old]?.password, 'clear-secret');
    });

    test('concurrent creations never exceed the quota and never share a name', async (t) => {
      const { alice, name } = await setup(t, dialect);
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => alice.client.call('POST', '/api/sip', { password: 'secret' })),
      );
      const created = answers.filter((a) => a.status === 'ok').map((a) => a.user);
      assert.equal(created.length, 5, JSON.stringify(answers));
      assert.deepEqual(
        answers.filter((a) => a.status !== 'ok').map((a) => a.status),
        Array(3).fill('quota-exceeded'),
      );
      assert.deepEqual(
        Object.keys(await accounts(alice.client)).sort(),
        [1, 2, 3, 4, 5].map((n) => `${name}_0${n}`),
      );
    });

    test('GET /api/sip: password and description; contact and expire only while registered', async (t) => {
      const { app, alice, name } = await setup(t, dialect);
      const { client } = alice;
      await client.call('POST', '/api/sip', { password: 'secret1', description: 'desk' });
      assert.deepEqual(await accounts(client), {
        [`${name}_01`]: { domain: app.config.sipDomainCurrent, password: 'secret1', description: 'desk' },
      });
      const now = Math.floor(Date.now() / 1000);
      await register(app, dialect, `${name}_01`, '192.0.2.7:5062', now + 300);
      await register(app, dialect, `${name}_01`, '192.0.2.8:5060', now + 600);
      await register(app, dialect, `${name}_01`, '192.0.2.9:5060', now - 10); // expired
      assert.deepEqual(await accounts(client), {
        [`${name}_01`]: {
          domain: app.config.sipDomainCurrent,
          password: 'secret1',
          description: 'desk',
          contact: '192.0.2.8:5060',
          expire: now + 600,
        },
      });
    });

    test('POST /api/sip/{sip-user}: changes, digests, wrong-sip, wrong-domain, sip_modify; new credentials end registrations', async (t) => {
      const { app, alice, name } = await setup(t, dialect);
      const { client } = alice;
      const user = `${name}_01`;
      await client.call('POST', '/api/sip', { password: 'secret1' });
      await newEvents(client);

      assert.equal((await client.call('POST', `/api/sip/${user}`, { description: 'hall' })).status, 'ok');
      const legacy = app.config.sipDomainLegacy;
      await register(app, dialect, user, '192.0.2.7:5062', Math.floor(Date.now() / 1000) + 300);
      assert.equal(
        (await client.call('POST', `/api/sip/${user}`, { password: 'secret2', domain: legacy })).status,
        'ok',
      );
      assert.deepEqual(await accounts(client), {
        [user]: { domain: legacy, password: 'secret2', description: 'hall' },
      });
      const row = await app.database.db
        .selectFrom('sip_account')
        .select(['ha1', 'ha1b'])
        .where('username', '=', user)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, sipDigests(user, legacy, 'secret2'));
      assert.equal(await locations(app, user), 0, 'the phone must register again');
      assert.deepEqual(
        (await newEvents(client)).map(({ event, user: u, domain, description }) => ({
          event,
          u,
          domain,
          description,
        })),
        [
          { event: 'sip_modify', u: user, domain: app.config.sipDomainCurrent, description: 'hall' },
          { event: 'sip_modify', u: user, domain: legacy, description: 'hall' },
          { event: 'sip_unregister', u: user, domain: undefined, description: undefined },
        ],
      );

      for (const [url, body, status] of [
        [`/api/sip/${user}`, { domain: 'elsewhere.example' }, 'wrong-domain'],
        [`/api/sip/${user}`, { password: 'four' }, 'wrong-syntax'],
        [`/api/sip/${user}`, { description: 'd'.repeat(101) }, 'wrong-syntax'],
        [`/api/sip/${name}_02`, { description: 'x' }, 'wrong-sip'],
        ['/api/sip/NotAName', { description: 'x' }, 'wrong-sip'],
      ] as const) {
        assert.equal((await client.call('POST', url, body)).status, status, `${url} ${JSON.stringify(body)}`);
      }
      assert.deepEqual(await accounts(client), {
        [user]: { domain: legacy, password: 'secret2', description: 'hall' },
      });
      assert.deepEqual(await newEvents(client), []);
    });

    test('DELETE /api/sip/{sip-user}: gone with its registrations and subscriptions; wrong-sip', async (t) => {
      const { app, alice, name } = await setup(t, dialect);
      const { client } = alice;
      const user = `${name}_01`;
      await client.call('POST', '/api/sip', { password: 'secret1' });
      await register(app, dialect, user, '192.0.2.7:5062', Math.floor(Date.now() / 1000) + 300);
      await newEvents(client);
      assert.equal((await client.call('DELETE', `/api/sip/${user}`)).status, 'ok');
      assert.deepEqual(await accounts(client), {});
      assert.equal(await locations(app, user), 0);
      assert.deepEqual(
        (await newEvents(client)).map(({ event, user: u, deleted }) => ({ event, u, deleted })),
        [
          { event: 'sip_modify', u: user, deleted: true },
          { event: 'sip_unregister', u: user, deleted: undefined },
        ],
      );
      assert.equal((await client.call('DELETE', `/api/sip/${user}`)).status, 'wrong-sip');
    });

    test('POST /api/sip/{sip-user}/notify: validation, wrong-sip, not-registered; fail while the call engine is not running (sent for real in calls.test.ts)', async (t) => {
      const { app, alice, name } = await setup(t, dialect);
      const { client } = alice;
      const user = `${name}_01`;
      await client.call('POST', '/api/sip', { password: 'secret1' });
      const good = { 'event-string': 'check-sync', 'content-type': 'text/plain', content: 'hello' };
      for (const [body, status] of [
        [{ ...good, 'event-string': 'e'.repeat(201) }, 'wrong-syntax'],
        [{ ...good, 'content-type': 'c'.repeat(201) }, 'wrong-syntax'],
        [{ ...good, content: 'c'.repeat(2501) }, 'wrong-syntax'],
        [{ ...good, content: 5 }, 'wrong-syntax'],
        [good, 'not-registered'],
        [{}, 'not-registered'],
      ] as const) {
        assert.equal(
          (await client.call('POST', `/api/sip/${user}/notify`, body)).status,
          status,
          JSON.stringify(body).slice(0, 60),
        );
      }
      assert.equal((await client.call('POST', `/api/sip/${name}_09/notify`, good)).status, 'wrong-sip');
      await register(app, dialect, user, '192.0.2.7:5062', Math.floor(Date.now() / 1000) + 300);
      const sent = await client.call('POST', `/api/sip/${user}/notify`, {
        ...good,
        'event-string': 'e'.repeat(200),
        content: 'c'.repeat(2500),
      });
      assert.deepEqual(sent, {
        status: 'fail',
        message: `the call engine is not running: no NOTIFY sent to ${user}`,
      });
    });

    test('BLF: list, empty changes, access-denied without a usergroup (even for an unknown number), wrong-syntax', async (t) => {
      const { app, alice, bob, name } = await setup(t, dialect);
      const { client } = alice;
      const user = `${name}_01`;
      await client.call('POST', '/api/sip', { password: 'secret1' });
      await app.services.phones.addNumber('+4930111', { userUuid: bob.user.uuid });
      const blf = `/api/sip/${user}/blf`;
      assert.deepEqual(await client.call('GET', blf), { status: 'ok', subscriptions: [] });
      assert.deepEqual(await client.call('POST', blf, {}), { status: 'ok' });
      assert.deepEqual(await client.call('POST', blf, { subscribe: [], unsubscribe: ['+4930111'] }), {
        status: 'ok',
      });
      for (const [body, status] of [
        // Access before existence: in no usergroup, a number not on the platform is no wrong-phone.
        [{ subscribe: ['+4930999'] }, 'access-denied'],
        [{ subscribe: ['+4930111'] }, 'access-denied'],
        [{ subscribe: ['4930111'] }, 'wrong-syntax'],
        [{ unsubscribe: 'all' }, 'wrong-syntax'],
        [{ subscribe: Array(BLF_LIMIT + 1).fill('+4930111') }, 'wrong-syntax'],
      ] as const) {
        assert.equal(
          (await client.call('POST', blf, body)).status,
          status,
          JSON.stringify(body).slice(0, 60),
        );
      }
      assert.equal((await client.call('GET', `/api/sip/${name}_02/blf`)).status, 'wrong-sip');
      assert.equal((await client.call('POST', `/api/sip/${name}_02/blf`, {})).status, 'wrong-sip');
      assert.deepEqual((await client.call('GET', blf)).subscriptions, []);
    });

    test('BLF with usergroups (as the partner API will give them): same group only, stored, bounded per account', async (t) => {
      const { app, alice, bob, name } = await setup(t, dialect);
      const user = `${name}_01`;
      await alice.client.call('POST', '/api/sip', { password: 'secret1' });
      const groups = new Map([
        [alice.user.uuid, 'g1'],
        [bob.user.uuid, 'g2'],
      ]);
      const s = app.services;
      const sip = new SipService({
        clock: systemClock,
        db: app.database.db,
        writer: s.writer,
        hub: s.hub,
        config: app.config,
        users: s.users,
        features: s.features,
        phones: s.phones,
        telephony: s.telephony,
        box: loadSecretBox(app.config),
        log: app.server.log,
        usergroups: { usergroupOf: async (uuid) => groups.get(uuid) },
      });
      const own = Array.from({ length: BLF_LIMIT + 1 }, (_, i) => `+49301${String(i).padStart(4, '0')}`);
      for (const number of own) await s.phones.addNumber(number, { userUuid: alice.user.uuid });
      await s.phones.addNumber('+4940111', { userUuid: bob.user.uuid });
      const owner = alice.user.uuid;
      await assert.rejects(sip.updateBlf(owner, user, ['+4940111'], []), { status: 'access-denied' });
      await sip.updateBlf(owner, user, own.slice(0, 3), []);
      await sip.updateBlf(owner, user, [own[3]!], [own[0]!]);
      assert.deepEqual(await sip.listBlf(owner, user), own.slice(1, 4));
      await sip.updateBlf(owner, user, own.slice(0, BLF_LIMIT), []);
      await assert.rejects(sip.updateBlf(owner, user, [own[BLF_LIMIT]!], []), { status: 'quota-exceeded' });
      assert.equal((await sip.listBlf(owner, user)).length, BLF_LIMIT, 'the refused call changed nothing');
      assert.deepEqual(
        (await alice.client.call('GET', `/api/sip/${user}/blf`)).subscriptions,
        own.slice(0, BLF_LIMIT),
      );
    });

    test('registration changes: sip_register and sip_unregister only when the state really changes', async (t) => {
      const { app, alice, bob, name } = await setup(t, dialect);
      const user = `${name}_01`;
      await alice.client.call('POST', '/api/sip', { password: 'secret1' });
      await newEvents(alice.client);
      await newEvents(bob.client);
      const sip = app.services.sip;
      const at = (contact: string, expires: number) => ({ sipUser: user, contact, expires, userAgent: 'x' });
      await sip.handleRegistration({ sipUser: user, registrations: [at('192.0.2.7:5062', 1000)] });
      await sip.handleRegistration({ sipUser: user, registrations: [at('192.0.2.7:5062', 2000)] }); // refresh
      await sip.handleRegistration({
        sipUser: user,
        registrations: [at('192.0.2.7:5062', 2000), at('192.0.2.8:5060', 3000)],
      });
      await sip.handleRegistration({ sipUser: user, registrations: [] });
      await sip.handleRegistration({ sipUser: user, registrations: [] });
      await sip.handleRegistration({ sipUser: 'nobody_01', registrations: [at('192.0.2.9:5060', 1000)] });
      assert.deepEqual(
        (await newEvents(alice.client)).map(({ event, user: u, contact, expire }) => ({
          event,
          u,
          contact,
          expire,
        })),
        [
          { event: 'sip_register', u: user, contact: '192.0.2.7:5062', expire: 1000 },
          { event: 'sip_register', u: user, contact: '192.0.2.8:5060', expire: 3000 },
          { event: 'sip_unregister', u: user, contact: undefined, expire: undefined },
        ],
      );
      assert.deepEqual(await newEvents(bob.client), []);
    });
  });
}
