/**
 * SIP accounts with a real phone (spec "SIP account" contact/expire; sip_register and
 * sip_unregister): an account made through the API registers with SIPp through the Kamailio
 * that the app starts; GET /api/sip shows the registration and the owner's sessions hear of it.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import {
  build,
  type Client,
  DIALECTS,
  type Dialect,
  eventually,
  loggedInClient,
} from '../../../test/helper.js';
import { freePort } from '../../../test/sip-peers.js';
import { freePortRange, requireTelephonyPackages, sippRegister } from '../../../test/sipp.js';
import type { App } from '../../app.js';
import type { RegistrationChange } from '../../telephony/index.js';

requireTelephonyPackages();

async function telephonyNode(t: TestContext, dialect: Dialect) {
  const sipPort = await freePort(); // Kamailio listens on UDP and TCP
  const [min, max] = await freePortRange();
  const app = await build(t, {
    dialect,
    env: { TELEPHONY: 'on', SIP_PORT: String(sipPort), RTP_PORT_MIN: String(min), RTP_PORT_MAX: String(max) },
  });
  assert.equal(app.services.telephony.state, 'running');
  return { app, server: `127.0.0.1:${sipPort}` };
}

const cursor = new WeakMap<Client, number>();

/** Waits (long-poll) for the next event named `name`; others are skipped. */
async function nextEvent(client: Client, name: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const next = cursor.get(client) ?? 0;
    const answer = await client.call('GET', `/api/event?next=${next}&timeout=5`);
    const events = answer.event as { id: number; event: string }[];
    for (const event of events) {
      cursor.set(client, event.id + 1);
      if (event.event === name) return event;
    }
  }
  throw new Error(`no ${name} event`);
}

function nextChange(app: App, sipUser: string): Promise<RegistrationChange> {
  return new Promise((resolve) => {
    const off = app.services.telephony.onRegistration((change) => {
      if (change.sipUser !== sipUser) return;
      off();
      resolve(change);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`SIP accounts with a registered phone (${dialect})`, () => {
    test('register: contact, expire and sip_register; unregister: gone and sip_unregister; delete ends a registration', async (t) => {
      const { app, server } = await telephonyNode(t, dialect);
      const { client } = await loggedInClient(app);
      const created = await client.call('POST', '/api/sip', { password: 'phone-secret' });
      assert.equal(created.status, 'ok');
      const user = created.user as string;
      const domain = created.domain as string;
      await nextEvent(client, 'sip_new');

      const before = Math.floor(Date.now() / 1000);
      const { port } = await sippRegister({
        server,
        user,
        password: 'phone-secret',
        domain,
        expires: 120,
        expect: 200,
      });
      const registered = await nextEvent(client, 'sip_register');
      const account = ((await client.call('GET', '/api/sip')).sip as Record<string, Record<string, unknown>>)[
        user
      ];
      assert.equal(account?.contact, `127.0.0.1:${port}`);
      const expire = account?.expire as number;
      assert.ok(expire >= before + 119 && expire <= before + 122, String(expire));
      assert.deepEqual(
        { user: registered.user, contact: registered.contact, expire: registered.expire },
        { user, contact: `127.0.0.1:${port}`, expire },
      );

      await sippRegister({ server, user, password: 'phone-secret', domain, expires: 0, expect: 200 });
      assert.equal((await nextEvent(client, 'sip_unregister')).user, user);
      const after = ((await client.call('GET', '/api/sip')).sip as Record<string, Record<string, unknown>>)[
        user
      ];
      assert.deepEqual(Object.keys(after ?? {}).sort(), ['description', 'domain', 'password']);

      // Registered again, then deleted: Kamailio forgets the phone at once and says so.
      await sippRegister({ server, user, password: 'phone-secret', domain, expires: 120, expect: 200 });
      await nextEvent(client, 'sip_register');
      const forgotten = nextChange(app, user);
      assert.equal((await client.call('DELETE', `/api/sip/${user}`)).status, 'ok');
      assert.equal((await nextEvent(client, 'sip_unregister')).user, user);
      assert.deepEqual((await forgotten).registrations, []);
      assert.deepEqual(await app.services.telephony.registrations(user), []);
      await sippRegister({ server, user, password: 'phone-secret', domain, expect: 401 });
    });

    test("a refresh from the same phone moves GET /api/sip's expire and sends no sip_register", async (t) => {
      const { app, server } = await telephonyNode(t, dialect);
      const { client } = await loggedInClient(app);
      const created = await client.call('POST', '/api/sip', { password: 'phone-secret' });
      const user = created.user as string;
      const phone = { server, user, password: 'phone-secret', domain: created.domain as string };
      await nextEvent(client, 'sip_new');
      const expire = async () =>
        ((await client.call('GET', '/api/sip')).sip as Record<string, Record<string, unknown>>)[user]?.expire;

      const before = Math.floor(Date.now() / 1000);
      const { port } = await sippRegister({ ...phone, expires: 60, expect: 200 });
      await nextEvent(client, 'sip_register');
      assert.ok(Number(await expire()) <= before + 62);

      await sippRegister({ ...phone, expires: 600, localPort: port, expect: 200 });
      // SQLite: the expiry shows once usrloc has written it back (one write-back interval).
      const after = await eventually(
        async () => Number(await expire()),
        (value) => value >= before + 599,
        'the refreshed expire in GET /api/sip',
        15_000,
        100,
      ).catch(async () => Number(await expire()));
      assert.ok(after >= before + 599 && after <= before + 602, String(after));
      const answer = await client.call('GET', `/api/event?next=${cursor.get(client) ?? 0}&timeout=1`);
      const names = (answer.event as { event: string }[]).map((event) => event.event);
      assert.deepEqual(
        names.filter((name) => name.startsWith('sip_')),
        [],
      );
    });
  });
}
