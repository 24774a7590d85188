/**
 * Helpers of the telephony, partner and device security tests (`<area>.security.test.ts`): a
 * partner session with chosen rights, and probes that call many routes as an attacker and check
 * that the victim's view is unchanged and that nothing of it reaches the attacker.
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { App } from '../src/app.js';
import type { PartnerRight } from '../src/modules/partner/index.js';
import { encodePacket } from '../src/modules/sensor/sensor.packet.js';
import { newUuid } from '../src/platform/ids.js';
import { DEVICE_KEY, FirmwareClient } from './devices.js';
import { type Answer, buildPartner, buildUser, Client, type Dialect, loggedInClient } from './helper.js';

/** A client logged in as a fresh partner holding `rights`. */
export async function partnerClient(app: App, rights: PartnerRight[]) {
  const partner = await buildPartner(app);
  await app.services.partners.setRights(partner.uuid, rights);
  const client = new Client(app);
  await client.open();
  assert.equal(
    (await client.call('POST', '/api/session', { partner: partner.name, key: partner.key })).status,
    'ok',
  );
  return { client, partner };
}

/** A client with a session that never logged in. */
export async function anonymousClient(app: App): Promise<Client> {
  const client = new Client(app);
  await client.open();
  return client;
}

/** One call an attacker makes: method, URL and body. */
export type Probe = readonly ['GET' | 'POST' | 'DELETE', string, unknown?];

/** Makes every probe with the client; each must answer `status` (or the status the probe maps to). */
export async function expectStatus(
  client: Client,
  probes: readonly Probe[],
  status: string | ((probe: Probe) => string),
): Promise<void> {
  for (const probe of probes) {
    const [method, url, body] = probe;
    const answer: Answer = await client.call(method, url, body);
    const expected = typeof status === 'string' ? status : status(probe);
    assert.equal(answer.status, expected, `${method} ${url} ${JSON.stringify(body)?.slice(0, 80) ?? ''}`);
  }
}

/**
 * Without a login every probe is no-auth (`others`: further sessions of the wrong kind, such as
 * a user's on partner routes, answer it too); without a session it is no-session.
 */
export async function expectLockedOut(
  app: App,
  probes: readonly Probe[],
  ...others: Client[]
): Promise<void> {
  for (const client of [await anonymousClient(app), ...others]) await expectStatus(client, probes, 'no-auth');
  await expectStatus(new Client(app), probes, 'no-session');
}

/**
 * A victim partner with a user of its own and an attacker partner with one too, both holding
 * `rights`, and a user session (of no partner) that tries the partner routes.
 */
export async function twoPartners(app: App, rights: PartnerRight[]) {
  const victim = await partnerClient(app, rights);
  const attacker = await partnerClient(app, rights);
  const user = await buildUser(app, { partnerUuid: victim.partner.uuid });
  const theirs = await buildUser(app, { partnerUuid: attacker.partner.uuid });
  const { client: plain } = await loggedInClient(app);
  return { victim, attacker, user, theirs, plain };
}

/**
 * Reads what the victim sees (`read`), runs the attack, and reads it again: the two must be
 * equal, so a test fails when an attack changed anything, whatever status it answered.
 */
export async function unchangedBy(read: () => Promise<unknown>, attack: () => Promise<void>): Promise<void> {
  const before = await read();
  await attack();
  assert.deepEqual(await read(), before);
}

/**
 * What the attacker can read (its lists and the retained events of its session) must not
 * mention any of `secrets` (the victim's UUIDs, names, numbers).
 */
export async function seesNothingOf(client: Client, urls: readonly string[], secrets: readonly string[]) {
  for (const url of [...urls, '/api/event?next=0&timeout=0']) {
    const answer = await client.call('GET', url);
    const text = JSON.stringify(answer);
    for (const secret of secrets)
      assert.ok(!text.includes(secret), `${url} shows ${secret}: ${text.slice(0, 300)}`);
  }
}

/** A string longer than the largest JSON body (1 MB by default): its body is too-large. */
export const HUGE = 'x'.repeat(1_100_000);

/** A UUID of the right form that names nothing. */
export const NOBODY = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';

/** A SIP registration row as Kamailio writes it (SQLite: Julian days; PostgreSQL: UTC timestamp). */
export async function registerSipAccount(
  app: App,
  dialect: Dialect,
  user: string,
  contact: string,
  expires: number,
) {
  const when =
    dialect === 'sqlite'
      ? // As db_sqlite writes it: the Julian day of expires - 0.5 s (see parseKamailioTime).
        sql`${(expires - 0.5) / 86400 + 2440587.5}`
      : sql`${new Date(expires * 1000).toISOString().replace('T', ' ').slice(0, 19)}`;
  await sql`INSERT INTO location (ruid, username, contact, expires, user_agent)
    VALUES (${newUuid()}, ${user}, ${`sip:${user}@${contact}`}, ${when}, 'test')`.execute(app.database.db);
}

/** A sensor packet (CSP) of `address` as a box passes it on, base64. */
export function packet(address: string, id: number, records: [number, number[]][]) {
  return Buffer.from(encodePacket(address, id, records)).toString('base64');
}

/** The box passes a sensor packet to the server (POST /api/device/csp). */
export function csp(firmware: FirmwareClient, base64: string, overrides: Record<string, unknown> = {}) {
  return firmware.call('POST', '/api/device/csp', {
    packet: base64,
    time: Math.floor(Date.now() / 1000),
    rssi: -61,
    lqi: 180,
    ...overrides,
  });
}

/** A logged-in user owning a box that is connected as its firmware would be. */
export async function ownerWithBox(app: App, overrides: Parameters<typeof buildUser>[1] = {}) {
  const user = await buildUser(app, overrides);
  const client = new Client(app);
  await client.login(user.username, user.password);
  const device = await app.services.devices.createDevice({ key: DEVICE_KEY, owner: user.uuid });
  const firmware = await FirmwareClient.connect(app, device.uuid);
  return { user, client, device, firmware };
}
