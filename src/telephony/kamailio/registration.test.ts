/**
 * Registration for real (issue 15 "Registration"; RFC 3261 §10, RFC 2617): SIPp registers
 * through the Kamailio that Zentrale starts, on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { build, buildUser, DIALECTS } from '../../../test/helper.js';
import { freePortRange, freeUdpPort, requireTelephonyPackages, sippRegister } from '../../../test/sipp.js';
import type { App } from '../../app.js';
import { insertSipAccount } from '../../modules/sip/sip.repository.js';
import { newUuid } from '../../platform/ids.js';
import { sipDigests } from '../index.js';

requireTelephonyPackages();

async function telephonyNode(t: TestContext, dialect: 'sqlite' | 'postgres') {
  const sipPort = await freeUdpPort();
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
  const password = `pw-${newUuid().slice(0, 8)}`;
  await insertSipAccount(app.database.db, {
    uuid: newUuid(),
    owner: user.uuid,
    username,
    domain,
    password,
    ...sipDigests(username, domain, password),
    description: '',
    created: Math.floor(Date.now() / 1000),
  });
  return { username, password, domain };
}

for (const dialect of DIALECTS) {
  describe(`SIP registration through Kamailio (${dialect})`, () => {
    test('the right password registers; the contact and expiry are visible; Expires: 0 removes it', async (t) => {
      const { app, server } = await telephonyNode(t, dialect);
      const account = await sipAccount(app);
      const changes: unknown[] = [];
      app.services.telephony.onRegistration((change) => changes.push(change));

      const before = Math.floor(Date.now() / 1000);
      const { port } = await sippRegister({
        server,
        user: account.username,
        password: account.password,
        domain: account.domain,
        expires: 120,
        expect: 200,
      });
      const [registration, ...more] = await app.services.telephony.registrations(account.username);
      assert.equal(more.length, 0);
      assert.equal(registration?.contact, `127.0.0.1:${port}`);
      assert.ok(registration && registration.expires >= before + 119 && registration.expires <= before + 122);

      await sippRegister({
        server,
        user: account.username,
        password: account.password,
        domain: account.domain,
        expires: 0,
        expect: 200,
      });
      assert.deepEqual(await app.services.telephony.registrations(account.username), []);
    });
  });
}
