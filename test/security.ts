/**
 * Helpers of the `<area>.security.test.ts` files: an owner, an attacker with a session
 * of their own and an unauthenticated session; tables of refused calls whose statuses are checked
 * while what the owner reads must stay the same, and the attacker's lists and events must not
 * mention the owner's objects.
 */
import assert from 'node:assert/strict';
import type { App } from '../src/app.js';
import { type Answer, bearer, buildPartner, Client, download, loggedInClient, upload } from './helper.js';

/** A UUID of the right form that names nothing. */
export const MISSING_UUID = '6f1c1a40-0000-1000-8000-000000000000';
/** A string longer than any format allows (and than a description column holds). */
export const HUGE = 'x'.repeat(200_000);

export type Method = 'GET' | 'POST' | 'DELETE';
/** A call: method, URL and (for POST) a body. */
export type Call = readonly [Method, string, unknown?];
/** A call and the status it must answer. */
export type Refusal = readonly [Method, string, unknown, string];

export interface Party {
  client: Client;
  user: Awaited<ReturnType<typeof loggedInClient>>['user'];
}

/** The owner, an attacker (a second user) and a session that never logged in. */
export async function parties(app: App): Promise<{ owner: Party; attacker: Party; anonymous: Client }> {
  const owner = await loggedInClient(app);
  const attacker = await loggedInClient(app);
  const anonymous = new Client(app);
  await anonymous.open();
  return { owner, attacker, anonymous };
}

/** What the client reads at the URLs (GET), to compare after an attack. */
export function read(client: Client, urls: readonly string[]): Promise<Answer[]> {
  return Promise.all(urls.map((url) => client.call('GET', url)));
}

/**
 * Makes each call as the client and checks its status; afterwards `watcher` reads `reads` exactly
 * as before (nothing changed).
 */
export async function expectRefused(
  client: Client,
  cases: readonly Refusal[],
  watch: { watcher: Client; reads: readonly string[] },
): Promise<void> {
  const before = await read(watch.watcher, watch.reads);
  for (const [method, url, body, status] of cases) {
    const answer = await client.call(method, url, body);
    assert.equal(answer.status, status, `${method} ${url}: ${answer.message ?? ''}`);
  }
  assert.deepEqual(await read(watch.watcher, watch.reads), before, 'the owner reads the same');
}

/**
 * Each call without a logged-in session: no-auth on an unauthenticated session, no-session
 * without any; nothing the watcher reads changes.
 */
export async function expectNoAuth(
  anonymous: Client,
  calls: readonly Call[],
  watch: { watcher: Client; reads: readonly string[] },
  status = 'no-auth',
): Promise<void> {
  const nobody = new Client(anonymous.app);
  const withStatus = (s: string) => calls.map(([method, url, body]) => [method, url, body, s] as const);
  await expectRefused(anonymous, withStatus(status), watch);
  await expectRefused(nobody, withStatus('no-session'), watch);
}

/** The client's lists (GET URLs) and all events of its session mention none of the secrets. */
export async function expectNoLeak(
  client: Client,
  lists: readonly string[],
  secrets: readonly string[],
): Promise<void> {
  const answers = await read(client, lists);
  for (const [i, answer] of answers.entries()) {
    assert.equal(answer.status, 'ok', lists[i]);
    const text = JSON.stringify(answer);
    for (const secret of secrets) assert.ok(!text.includes(secret), `${lists[i]} shows ${secret}`);
  }
  const events = JSON.stringify((await client.call('GET', '/api/event?next=0&timeout=0')).event);
  for (const secret of secrets) assert.ok(!events.includes(secret), `an event shows ${secret}`);
}

/** The calls of `calls` with a status each (the same for all). */
export function refusals(calls: readonly Call[], status: string): Refusal[] {
  return calls.map(([method, url, body]) => [method, url, body, status]);
}

let packs = 0;

/** Gives the user only a pack with these quotas (volume in MB), in place of the default pack. */
export async function onlyPack(
  app: App,
  user: string,
  quota: { volume?: number; sip?: number; fax?: number },
) {
  const { features } = app.services;
  packs += 1;
  const name = `security${packs}`;
  await features.createPack(name, { quota });
  await features.unassignPack(user, 'default');
  await features.assignPack(user, name);
}

/** The binary routes of a content object: raw uploads (URL and body) and downloads (URLs). */
export interface BinaryRoutes {
  uploads: readonly (readonly [string, Uint8Array])[];
  downloads: readonly string[];
}

/**
 * Uploads as the client answer `status`; downloads answer HTTP 404 with an empty body; what the
 * watcher reads stays the same.
 */
export async function expectBinaryRefused(
  client: Client,
  routes: BinaryRoutes,
  status: string,
  watch: { watcher: Client; reads: readonly string[] },
): Promise<void> {
  const before = await read(watch.watcher, watch.reads);
  for (const [url, body] of routes.uploads)
    assert.equal((await upload(client, url, body)).status, status, `upload ${url}`);
  for (const url of routes.downloads) {
    const response = await download(client.app, url, client.sid ? bearer(client) : {});
    assert.deepEqual([response.statusCode, response.body], [404, ''], `download ${url}`);
  }
  assert.deepEqual(await read(watch.watcher, watch.reads), before, 'the owner reads the same');
}

/**
 * A content object (fax, presentation, announcement, recording) attacked by a stranger
 * (`wrong-<type>`, downloads 404) and by sessions that never logged in (no-auth, no-session);
 * nothing the owner reads changes and the stranger's events show nothing of the object.
 */
export async function attackContentObject(
  sides: { attacker: Party; anonymous: Client },
  object: { type: string; uuid: string; routes: readonly Call[]; binary: BinaryRoutes },
  watch: { watcher: Client; reads: readonly string[] },
): Promise<void> {
  const { attacker, anonymous } = sides;
  await expectRefused(attacker.client, refusals(object.routes, `wrong-${object.type}`), watch);
  await expectBinaryRefused(attacker.client, object.binary, `wrong-${object.type}`, watch);
  await expectNoAuth(anonymous, object.routes, watch);
  await expectBinaryRefused(anonymous, object.binary, 'no-auth', watch);
  await expectBinaryRefused(new Client(anonymous.app), object.binary, 'no-session', watch);
  await expectNoLeak(attacker.client, [], [object.uuid]);
}

let partners = 0;

/** A new partner with these rights and a session logged in as it. */
export async function partnerParty(app: App, rights: ('phone' | 'cdr')[] = ['phone']) {
  partners += 1;
  const partner = await buildPartner(app, `security${process.pid}x${partners}`);
  await app.services.partners.setRights(partner.uuid, rights);
  const client = new Client(app);
  await client.open();
  const answer = await client.call('POST', '/api/session', { partner: partner.name, key: partner.key });
  assert.equal(answer.status, 'ok');
  return { client, uuid: partner.uuid };
}
