/**
 * Registration for real (RFC 3261 §10, RFC 2617): SIPp registers
 * through the Kamailio that Zentrale starts, on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { build, buildUser, DIALECTS, eventually } from '../../../test/helper.js';
import { addSipAccount, freePort } from '../../../test/sip-peers.js';
import {
  challenge,
  freePortRange,
  guessUntilRefused,
  requireTelephonyPackages,
  sippRegister,
  sippRegisterBurst,
} from '../../../test/sipp.js';
import type { App } from '../../app.js';
import type { RegistrationChange } from '../index.js';

requireTelephonyPackages();

async function telephonyNode(t: TestContext, dialect: 'sqlite' | 'postgres') {
  const sipPort = await freePort(); // Kamailio listens on UDP and TCP
  const [min, max] = await freePortRange();
  const app = await build(t, {
    dialect,
    env: { TELEPHONY: 'on', SIP_PORT: String(sipPort), RTP_PORT_MIN: String(min), RTP_PORT_MAX: String(max) },
  });
  assert.equal(app.services.telephony.state, 'running');
  return { app, server: `127.0.0.1:${sipPort}` };
}

let accounts = 0;
async function sipAccount(app: App, domain = app.config.sipDomainCurrent) {
  const user = await buildUser(app);
  accounts += 1;
  const username = `phone${process.pid % 10000}_${String(accounts).padStart(2, '0')}`;
  return addSipAccount(app, username, { owner: user.uuid, domain });
}

/** The next registration change of `sipUser`; fails after 20 s instead of waiting for ever. */
function nextChange(app: App, sipUser: string): Promise<RegistrationChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no registration change of ${sipUser} within 20 s`));
    }, 20_000);
    const off = app.services.telephony.onRegistration((change) => {
      if (change.sipUser !== sipUser) return;
      clearTimeout(timer);
      off();
      resolve(change);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`SIP registration through Kamailio (${dialect})`, () => {
    test('the right password registers; the contact and expiry are visible; Expires: 0 removes it', async (t) => {
      const { app, server } = await telephonyNode(t, dialect);
      const account = await sipAccount(app);
      const registered = nextChange(app, account.username);

      const before = Math.floor(Date.now() / 1000);
      const { port } = await sippRegister({
        server,
        user: account.username,
        password: account.password,
        domain: account.domain,
        expires: 120,
        expect: 200,
      });
      const reported = (await registered).registrations;
      const [registration, ...more] = await app.services.telephony.registrations(account.username);
      assert.equal(more.length, 0);
      assert.equal(registration?.contact, `127.0.0.1:${port}`);
      assert.ok(registration && registration.expires >= before + 119 && registration.expires <= before + 122);
      assert.deepEqual(reported, [registration]);

      const unregistered = nextChange(app, account.username);

      await sippRegister({
        server,
        user: account.username,
        password: account.password,
        domain: account.domain,
        expires: 0,
        expect: 200,
      });
      assert.deepEqual((await unregistered).registrations, []);
      assert.deepEqual(await app.services.telephony.registrations(account.username), []);
    });

    test('a refresh from the same contact is not reported; registrations() shows its expiry, and the old expiry passes without an unregistration', async (t) => {
      const { app, server } = await telephonyNode(t, dialect);
      const account = await sipAccount(app);
      const phone = { server, user: account.username, password: account.password, domain: account.domain };
      const registered = nextChange(app, account.username);
      const before = Math.floor(Date.now() / 1000);
      const { port } = await sippRegister({ ...phone, expires: 30, expect: 200 });
      assert.equal((await registered).registrations.length, 1);

      const changes: { at: number; change: RegistrationChange }[] = [];
      const off = app.services.telephony.onRegistration((change) => {
        if (change.sipUser === account.username) changes.push({ at: Date.now(), change });
      });
      t.after(off);
      await sippRegister({ ...phone, expires: 120, localPort: port, expect: 200 });
      const refreshed = Date.now();
      // The refreshed expiry shows once usrloc has written it back (SQLite: one write-back interval).
      const registrations = await eventually(
        () => app.services.telephony.registrations(account.username),
        (rows) => (rows[0]?.expires ?? 0) >= before + 119,
        'the refreshed expiry',
        15_000,
        100,
      ).catch(async (error: Error) => {
        throw new Error(
          `${error.message}: ${JSON.stringify(await app.services.telephony.registrations(account.username))}`,
        );
      });
      assert.equal(registrations.length, 1);
      assert.equal(registrations[0]?.contact, `127.0.0.1:${port}`);
      assert.ok((registrations[0]?.expires ?? 0) >= before + 119, JSON.stringify(registrations));
      // Past the first expiry (30 s) and the watch's wake-up after it: still registered, never
      // reported as gone, and the refresh itself was not reported. A real wait: the expiry runs on
      // Kamailio's clock, in another process.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, (before + 30) * 1000 + 7000 - Date.now())),
      );
      assert.equal((await app.services.telephony.registrations(account.username)).length, 1);
      assert.deepEqual(
        changes.filter(({ change }) => change.registrations.length === 0),
        [],
        'no unregistration',
      );
      assert.deepEqual(
        changes.filter(({ at }) => at < refreshed + 5000),
        [],
        'the refresh is not reported',
      );
    });

    test('a wrong password is refused and registers nothing', async (t) => {
      const { app, server } = await telephonyNode(t, dialect);
      const account = await sipAccount(app);
      await sippRegister({
        server,
        user: account.username,
        password: 'wrong',
        domain: account.domain,
        expect: 401,
      });
      assert.deepEqual(await app.services.telephony.registrations(account.username), []);
    });

    test("the server's address as domain: the account's own domain is the realm", async (t) => {
      const { app, server } = await telephonyNode(t, dialect);
      const account = await sipAccount(app, app.config.sipDomainLegacy);
      const first = await challenge(server, account.username, server);
      assert.equal(first.realm, app.config.sipDomainLegacy);
      const registered = nextChange(app, account.username);
      await sippRegister({
        server,
        user: account.username,
        password: account.password,
        domain: server,
        expect: 200,
      });
      await registered;
      assert.equal((await app.services.telephony.registrations(account.username)).length, 1);
    });

    test('an unknown name is answered exactly like a known one', async (t) => {
      const { app, server } = await telephonyNode(t, dialect);
      const account = await sipAccount(app);
      const domain = app.config.sipDomainCurrent;
      const known = await challenge(server, account.username, domain);
      const unknown = await challenge(server, 'nobody_01', domain);
      assert.equal(known.status, 'SIP/2.0 401 Unauthorized');
      assert.deepEqual(unknown, known);
      await sippRegister({ server, user: 'nobody_01', password: 'whatever', domain, expect: 401 });
    });

    test('repeated failures refuse the account at the failing address only; the phone elsewhere still registers', async (t) => {
      const { app, server } = await telephonyNode(t, dialect);
      const account = await sipAccount(app);
      const attack = { server, user: account.username, domain: account.domain, localIp: '127.0.0.3' };
      assert.equal(await guessUntilRefused(attack), 10);
      // Refused now, even with the right password.
      await sippRegister({ ...attack, password: account.password, expect: 503 });
      const registered = nextChange(app, account.username);
      await sippRegister({
        server,
        user: account.username,
        password: account.password,
        domain: account.domain,
        expect: 200,
      });
      await registered;
      assert.equal((await app.services.telephony.registrations(account.username)).length, 1);
    });

    test('a burst of 200 accounts registering at once while Zentrale writes: every one registered, none refused', async (t) => {
      const { app, server } = await telephonyNode(t, dialect);
      const owner = (await buildUser(app)).uuid;
      const password = 'burst-password-1';
      const users = Array.from(
        { length: 200 },
        (_, i) => `burst${Math.floor(i / 100)}_${String(i % 100).padStart(2, '0')}`,
      );
      for (const username of users) await addSipAccount(app, username, { owner, password });
      const reported = new Set<string>();
      const allReported = new Promise<void>((resolve) => {
        const off = app.services.telephony.onRegistration((change) => {
          if (change.registrations.length > 0) reported.add(change.sipUser);
          if (reported.size < users.length) return;
          off();
          resolve();
        });
      });
      // Zentrale's own writes to the same database meanwhile (sessions, events, CDRs do this).
      let writing = true;
      const writes = (async () => {
        let count = 0;
        while (writing) {
          await app.database.db
            .updateTable('sip_account')
            .set({ description: `write ${count++}` })
            .where('username', '=', users[0] ?? '')
            .execute();
          await new Promise((resolve) => setImmediate(resolve));
        }
        return count;
      })();
      const burst = await sippRegisterBurst({
        server,
        users,
        password,
        domain: app.config.sipDomainCurrent,
        rate: 1000,
      });
      writing = false;
      t.diagnostic(`Zentrale wrote ${await writes} times during the burst`);
      assert.deepEqual(burst.unexpected, [], 'no answer but 401 and 200');
      assert.equal(burst.successful, users.length);
      assert.equal(burst.failed, 0);
      await allReported;
      for (const username of users)
        assert.equal((await app.services.telephony.registrations(username)).length, 1, username);
      // All of them reach the location table (write-back on SQLite: within seconds).
      const stored = await eventually(
        async () => {
          const row = await app.database.db
            .selectFrom('location')
            .select((eb) => eb.fn.countAll<number>().as('count'))
            .where('username', 'like', 'burst%')
            .executeTakeFirstOrThrow();
          return Number(row.count);
        },
        (count) => count >= users.length,
        'every registration of the burst written back',
        20_000,
        100,
      );
      assert.equal(stored, users.length, 'every registration in the location table');
    });
  });
}

test('closing the app stops both engines with every process they forked', async (t) => {
  const { app } = await telephonyNode(t, 'sqlite');
  const dir = path.join(app.config.dataDir, 'telephony');
  const groups = ['kamailio.pid', 'rtpengine.pid'].map((file) =>
    Number(fs.readFileSync(path.join(dir, file), 'utf8')),
  );
  for (const group of groups) process.kill(-group, 0); // running now
  await app.close();
  for (const group of groups) assert.throws(() => process.kill(-group, 0), { code: 'ESRCH' });
});
