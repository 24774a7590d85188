/**
 * Webhooks (decisions.md "Event transports"): a local receiver gets the user's events in the
 * long-poll's order, signed, at least once, across a restart of the node and failed attempts;
 * never another user's; a subscription that keeps failing is disabled with an event; each status.
 */
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { build, Client, DIALECTS, loggedInClient, testEnv, until } from '../../../test/helper.js';
import { partnerClient } from '../../../test/security-telephony.js';
import { buildApp } from '../../app.js';
import { observeQueries } from '../../db/dialect/observe.js';
import { loadConfig } from '../../platform/config.js';

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  json: { id: number; event: string; time: number; [field: string]: unknown };
}

/** A webhook receiver; `answer` says the HTTP status of each attempt. */
async function receiver(t: TestContext, answer: (delivery: Delivery) => number = () => 200) {
  const attempts: Delivery[] = [];
  const delivered: Delivery[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk;
    });
    request.on('end', () => {
      const delivery = { headers: request.headers, body, json: JSON.parse(body) as Delivery['json'] };
      attempts.push(delivery);
      const status = answer(delivery);
      if (status < 300) delivered.push(delivery);
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, attempts, delivered };
}

/** What a receiver does to verify a delivery (decisions.md "Event transports"). */
function verified(delivery: Delivery, secret: string): boolean {
  const timestamp = delivery.headers['zentrale-timestamp'];
  const header = String(delivery.headers['zentrale-signature'] ?? '');
  const expected = createHmac('sha256', secret).update(`${timestamp}.${delivery.body}`).digest('hex');
  const given = Buffer.from(header.replace(/^v1=/, ''), 'hex');
  return given.length === 32 && timingSafeEqual(given, Buffer.from(expected, 'hex'));
}

const ENV = { WEBHOOK_PRIVATE_URLS: 'on', WEBHOOK_RETRY_MS: '1' };

for (const dialect of DIALECTS) {
  describe(`webhooks (${dialect})`, () => {
    test("the user's events in the long-poll's order, signed, across failures and a restart; none of another user", async (t) => {
      const env = await testEnv(t, dialect, ENV);
      const first = await buildApp(loadConfig(env));
      let firstOpen = true;
      t.after(() => (firstOpen ? first.close() : undefined));
      // The third event fails twice before it is taken; from n = 5 on the receiver is down until the restart.
      let down = false;
      const failed = new Map<number, number>();
      const hook = await receiver(t, (d) => {
        const n = d.json.n as number;
        if (down && n >= 5) return 503;
        if (n === 2 && (failed.get(n) ?? 0) < 2) {
          failed.set(n, (failed.get(n) ?? 0) + 1);
          return 500;
        }
        return 200;
      });
      const { client, user } = await loggedInClient(first);
      const { client: stranger, user: other } = await loggedInClient(first);
      const created = await client.call('POST', '/api/webhook', { url: hook.url });
      assert.equal(created.status, 'ok');
      const secret = created.secret as string;
      assert.match(secret, /^whsec_/);
      const theirs = await stranger.call('POST', '/api/webhook', { url: `${hook.url}?theirs` });
      assert.equal(theirs.status, 'ok');
      const hub = first.services.hub;
      for (let n = 0; n < 5; n++) hub.emit({ users: [user.uuid] }, 'object_new', { object: `o${n}`, n });
      await until(
        () =>
          hook.delivered.filter(
            (d) => d.headers['zentrale-webhook'] === (created.webhook as { uuid: string }).uuid,
          ).length === 5,
        'five deliveries',
      );
      assert.equal(failed.get(2), 2, 'the third event was refused twice, then delivered');
      down = true;
      for (let n = 5; n < 8; n++) hub.emit({ users: [user.uuid] }, 'object_new', { object: `o${n}`, n });
      await first.services.webhooks.idle();
      await until(() => hook.attempts.some((d) => d.json.n === 5), 'an attempt at the sixth event');
      firstOpen = false;
      await first.close();
      down = false;

      const second = await buildApp(loadConfig(env));
      t.after(() => second.close());
      second.services.hub.emit({ users: [user.uuid] }, 'object_new', { object: 'o8', n: 8 });
      const mine = () =>
        hook.delivered.filter(
          (d) => d.headers['zentrale-webhook'] === (created.webhook as { uuid: string }).uuid,
        );
      await until(() => mine().length === 9, 'every event after the restart');
      const again = new Client(second);
      again.sid = client.sid;
      const polled = (await again.call('GET', '/api/event?next=0&timeout=0')).event as Delivery['json'][];
      const strip = ({ id: _id, ...rest }: Delivery['json']) => rest;
      assert.deepEqual(
        mine().map((d) => strip(d.json)),
        polled.map(strip),
      );
      assert.deepEqual(
        mine().map((d) => d.json.id),
        [0, 1, 2, 3, 4, 5, 6, 7, 8],
      );
      for (const delivery of mine()) {
        assert.ok(verified(delivery, secret));
        assert.ok(!verified(delivery, theirs.secret as string), 'another secret does not verify');
      }
      // The stranger's subscription got none of the user's events (it had none of its own).
      assert.ok(
        hook.attempts.every(
          (d) => d.headers['zentrale-webhook'] !== (theirs.webhook as { uuid: string }).uuid,
        ),
      );
      assert.equal(other.uuid === user.uuid, false);
    });

    test('a subscription failing 8 times in a row is disabled and its owner is told', async (t) => {
      const app = await build(t, { dialect, env: ENV });
      const hook = await receiver(t, () => 500);
      const { client, user } = await loggedInClient(app);
      const created = await client.call('POST', '/api/webhook', {
        url: hook.url,
        event: ['object_new'],
        secret: 'my-own-secret-0123',
      });
      assert.equal(created.secret, 'my-own-secret-0123');
      const uuid = (created.webhook as { uuid: string }).uuid;
      app.services.hub.emit({ users: [user.uuid] }, 'tag_new', { tag: 'filtered out' });
      app.services.hub.emit({ users: [user.uuid] }, 'object_new', { object: 'x' });
      await until(
        async () =>
          ((await client.call('GET', '/api/event?next=0&timeout=0')).event as { event: string }[]).some(
            (e) => e.event === 'webhook_disabled',
          ),
        'the webhook_disabled event',
      );
      const polled = (await client.call('GET', '/api/event?next=0&timeout=0')).event as Record<
        string,
        unknown
      >[];
      assert.deepEqual(
        polled.filter((e) => e.event === 'webhook_disabled').map((e) => [e.webhook, e.url, e.failures]),
        [[uuid, hook.url, 8]],
      );
      assert.equal(hook.attempts.length, 8);
      assert.ok(hook.attempts.every((d) => d.json.event === 'object_new' && d.json.id === 0));
      const listed = await client.call('GET', '/api/webhook');
      assert.deepEqual(
        (listed.webhook as { state: string; failures: number; event: string[] }[]).map((w) => [
          w.state,
          w.failures,
          w.event,
        ]),
        [['disabled', 8, ['object_new']]],
      );
      assert.equal((listed.webhook as Record<string, unknown>[])[0]!.secret, undefined);
    });

    test("a partner's subscription gets the events addressed to the partner, not a user's", async (t) => {
      const app = await build(t, { dialect, env: ENV });
      const hook = await receiver(t);
      const { client: partner, partner: owner } = await partnerClient(app, []);
      const { user } = await loggedInClient(app);
      const made = await partner.call('POST', '/api/partner/webhook', { url: hook.url });
      assert.equal(made.status, 'ok');
      app.services.hub.emit({ users: [user.uuid] }, 'object_new', { n: 0 });
      app.services.hub.emit({ users: [owner.uuid] }, 'partner_note', { n: 1 });
      await until(() => hook.delivered.length === 1, 'the partner event');
      await app.services.webhooks.idle();
      assert.deepEqual(
        hook.attempts.map((d) => [d.json.id, d.json.event, d.json.n]),
        [[0, 'partner_note', 1]],
      );
      assert.ok(verified(hook.delivered[0]!, made.secret as string));
    });

    test('events emitted together are logged in one transaction: one seq update per subscription, one insert for all; each receiver gets them in order', async (t) => {
      const app = await build(t, { dialect, env: ENV });
      const { client, user } = await loggedInClient(app);
      const hooks = await Promise.all([0, 1, 2].map(() => receiver(t)));
      for (const hook of hooks)
        assert.equal((await client.call('POST', '/api/webhook', { url: hook.url })).status, 'ok');
      await app.services.webhooks.idle();
      const statements: string[] = [];
      const stop = observeQueries((query) => {
        if (/webhook/.test(query.sql)) statements.push(query.sql);
      });
      try {
        for (let n = 0; n < 20; n++) app.services.hub.emit({ users: [user.uuid] }, 'object_new', { n });
        await until(
          () => hooks.every((hook) => hook.delivered.length === 20),
          'twenty events at each receiver',
        );
        await app.services.webhooks.idle();
      } finally {
        stop();
      }
      const count = (pattern: RegExp) => statements.filter((sql) => pattern.test(sql)).length;
      assert.equal(count(/^insert into "webhook_event"/i), 1, statements.join('\n'));
      assert.equal(count(/^update "webhook" set "next_seq"/i), 3, statements.join('\n'));
      for (const hook of hooks)
        assert.deepEqual(
          hook.delivered.map((d) => d.json.n),
          Array.from({ length: 20 }, (_, n) => n),
        );
    });

    test('each status; bad input and strangers change nothing; partners have their own', async (t) => {
      const app = await build(t, { dialect, env: { WEBHOOK_PRIVATE_URLS: 'off' } });
      const { client } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const url = 'https://93.184.216.34/hook';
      for (const [body, status] of [
        [{}, 'missing-element'],
        [{ url: 'ftp://93.184.216.34/x' }, 'wrong-syntax'],
        [{ url: 'not a url' }, 'wrong-syntax'],
        [{ url: 'https://user:pw@93.184.216.34/' }, 'wrong-syntax'],
        [{ url, secret: 'short' }, 'wrong-syntax'],
        [{ url, event: [] }, 'wrong-syntax'],
        [{ url, event: ['Bad-Name'] }, 'wrong-syntax'],
        [{ url: 'http://127.0.0.1:9/hook' }, 'access-denied'],
        [{ url: 'http://[::1]:9/hook' }, 'access-denied'],
        [{ url: 'http://10.1.2.3/hook' }, 'access-denied'],
        [{ url: 'http://169.254.169.254/latest' }, 'access-denied'],
      ] as const)
        assert.equal((await client.call('POST', '/api/webhook', body)).status, status, JSON.stringify(body));
      assert.deepEqual((await client.call('GET', '/api/webhook')).webhook, []);
      const uuids: string[] = [];
      for (let i = 0; i < 10; i++)
        uuids.push(((await client.call('POST', '/api/webhook', { url })).webhook as { uuid: string }).uuid);
      assert.equal((await client.call('POST', '/api/webhook', { url })).status, 'exceeded-limit');
      assert.equal((await stranger.call('DELETE', `/api/webhook/${uuids[0]}`)).status, 'wrong-webhook');
      assert.deepEqual((await stranger.call('GET', '/api/webhook')).webhook, []);
      assert.equal(
        (await client.call('DELETE', '/api/webhook/00000000-0000-1000-8000-000000000000')).status,
        'wrong-webhook',
      );
      assert.equal((await client.call('DELETE', '/api/webhook/nope')).status, 'wrong-syntax');
      assert.equal((await client.call('DELETE', `/api/webhook/${uuids[0]}`)).status, 'ok');
      assert.equal(((await client.call('GET', '/api/webhook')).webhook as unknown[]).length, 9);
      const anonymous = new Client(app);
      await anonymous.open();
      assert.equal((await anonymous.call('POST', '/api/webhook', { url })).status, 'no-auth');
      assert.equal((await new Client(app).call('GET', '/api/webhook')).status, 'no-session');
      const { client: partner } = await partnerClient(app, []);
      assert.equal((await partner.call('POST', '/api/webhook', { url })).status, 'no-auth');
      assert.equal((await client.call('GET', '/api/partner/webhook')).status, 'no-auth');
      const made = await partner.call('POST', '/api/partner/webhook', { url });
      assert.equal(made.status, 'ok');
      assert.deepEqual(
        ((await partner.call('GET', '/api/partner/webhook')).webhook as { uuid: string }[]).map(
          (w) => w.uuid,
        ),
        [(made.webhook as { uuid: string }).uuid],
      );
      assert.equal(
        (await client.call('DELETE', `/api/webhook/${(made.webhook as { uuid: string }).uuid}`)).status,
        'wrong-webhook',
      );
    });
  });
}

describe('webhooks, two nodes on one PostgreSQL', () => {
  test('events emitted on either node are delivered once each, in emit order', async (t) => {
    const env = await testEnv(t, 'postgres', ENV);
    const a = await buildApp(loadConfig(env));
    t.after(() => a.close());
    const b = await buildApp(loadConfig(env));
    t.after(() => b.close());
    const hook = await receiver(t);
    const { client, user } = await loggedInClient(a);
    assert.equal((await client.call('POST', '/api/webhook', { url: hook.url })).status, 'ok');
    await until(() => b.services.webhooks.watches(user.uuid), 'the other node learnt of the subscription');
    a.services.hub.emit({ users: [user.uuid] }, 'object_new', { n: 0 });
    await until(() => hook.delivered.length === 1, 'the first delivery');
    for (let n = 1; n < 4; n++) b.services.hub.emit({ users: [user.uuid] }, 'object_new', { n });
    await until(() => hook.delivered.length === 4, 'four deliveries');
    await b.services.webhooks.idle();
    await a.services.webhooks.idle();
    assert.deepEqual(
      hook.delivered.map((d) => [d.json.id, d.json.n]),
      [
        [0, 0],
        [1, 1],
        [2, 2],
        [3, 3],
      ],
    );
    assert.equal(hook.attempts.length, 4, 'each once');
  });
});
