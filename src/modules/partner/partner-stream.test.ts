/**
 * Spec "Partner API": user and CDR event streams split among subscribing sessions (one node and,
 * on PostgreSQL, two nodes on one database), the CDR list of a number, calls per number.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import {
  build,
  buildPartner,
  buildUser,
  Client,
  DIALECTS,
  type Dialect,
  heldLongPoll,
  loggedInClient,
  testEnv,
  until,
} from '../../../test/helper.js';
import { type App, buildApp } from '../../app.js';
import { SettableClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';
import { newUuid } from '../../platform/ids.js';

interface Ev {
  id: number;
  event: string;
  user?: string;
  [field: string]: unknown;
}

async function partnerSession(app: App, partner: { name: string; key: string }) {
  const client = new Client(app);
  await client.open();
  const answer = await client.call('POST', '/api/session', { partner: partner.name, key: partner.key });
  assert.equal(answer.status, 'ok');
  return client;
}

async function newPartner(app: App, rights: ('phone' | 'cdr')[] = ['phone', 'cdr']) {
  const partner = await buildPartner(app);
  await app.services.partners.setRights(partner.uuid, rights);
  return partner;
}

/**
 * An app with two partners (rights phone and cdr), a session and a user of each: `client` and
 * `user` of `partner`, `stranger` and `foreign` of `other`.
 */
async function twoPartners(t: TestContext, dialect: Dialect) {
  const app = await build(t, { dialect });
  const partner = await newPartner(app);
  const other = await newPartner(app);
  const client = await partnerSession(app, partner);
  const stranger = await partnerSession(app, other);
  const user = await buildUser(app, { partnerUuid: partner.uuid });
  const foreign = await buildUser(app, { partnerUuid: other.uuid });
  return { app, partner, other, client, stranger, user, foreign };
}

function queueOf(client: Client) {
  const session = client.app.services.sessions.findBySid(client.sid!)!;
  return session.queue;
}

const sipRegister = (app: App, user: string, account = 'ada_01') =>
  app.services.hub.emit({ users: [user] }, 'sip_register', {
    user: account,
    contact: '10.0.0.1:5060',
    expire: 60,
  });

async function published(...apps: App[]) {
  for (const app of apps) await app.services.partnerStreams.idle();
}

/** sip_register of the user for each account name (ada_01 when none is given), then published. */
async function register(app: App, user: string, ...accounts: string[]) {
  for (const account of accounts.length > 0 ? accounts : ['ada_01']) sipRegister(app, user, account);
  await published(app);
}

/** The events GET /api/event answers the client now (`query` as given). */
async function eventsOf(client: Client, query = 'timeout=0'): Promise<Ev[]> {
  return (await client.call('GET', `/api/event?${query}`)).event as Ev[];
}

/** A partner (rights phone and cdr), a user of it, and `sessions` partner sessions subscribed to its user events. */
async function subscribed(app: App, sessions: number, query = '') {
  const partner = await newPartner(app);
  const user = await buildUser(app, { partnerUuid: partner.uuid });
  const clients: Client[] = [];
  for (let i = 0; i < sessions; i++) {
    const client = await partnerSession(app, partner);
    await client.call('GET', `/api/partner/user/event${query}`);
    clients.push(client);
  }
  return { partner, user, clients };
}

for (const dialect of DIALECTS) {
  describe(`partner event streams (${dialect})`, () => {
    test("user events of the partner's users reach a subscribed session with `user`; others not; statuses", async (t) => {
      const { app, client, stranger, user, foreign } = await twoPartners(t, dialect);
      // Not subscribed: nothing is kept.
      await register(app, user.uuid);
      assert.deepEqual(await client.call('GET', '/api/partner/user/event'), { status: 'ok' });
      assert.deepEqual((await client.call('GET', '/api/event?timeout=0')).event, []);
      const held = (await heldLongPoll(client, 30)).answer;
      await register(app, user.uuid);
      const [event] = (await held).event as Ev[];
      assert.deepEqual(
        { ...event, time: 0 },
        {
          id: 0,
          event: 'sip_register',
          time: 0,
          user: user.uuid,
          sip: 'ada_01',
          contact: '10.0.0.1:5060',
          expire: 60,
        },
      );
      // Another partner's user, an event partners do not observe, a user without partner: nothing.
      sipRegister(app, foreign.uuid);
      app.services.hub.emit({ users: [user.uuid] }, 'user_modify');
      const loner = await buildUser(app);
      sipRegister(app, loner.uuid);
      app.services.hub.emit({ users: [user.uuid] }, 'fax_convert', { fax: newUuid(), page_count: 2 });
      app.services.hub.emit({ users: [user.uuid] }, 'conference_start', {
        conference: newUuid(),
        owner: user.uuid,
      });
      await published(app);
      const events = await eventsOf(client, 'next=1&timeout=0');
      assert.deepEqual(
        events.map((e) => [e.event, e.user]),
        [
          ['fax_convert', user.uuid],
          ['conference_start', user.uuid],
        ],
      );
      assert.deepEqual((await stranger.call('GET', '/api/event?timeout=0')).event, []);
      // DELETE stops the flow (and is ok when not subscribed).
      assert.deepEqual(await client.call('DELETE', '/api/partner/user/event'), { status: 'ok' });
      assert.deepEqual(await client.call('DELETE', '/api/partner/user/event'), { status: 'ok' });
      await register(app, user.uuid);
      assert.deepEqual((await client.call('GET', '/api/event?next=3&timeout=0')).event, []);
      for (const query of ['timeout=0', 'timeout=36001', 'timeout=x', 'timeout=1.5'])
        assert.equal(
          (await client.call('GET', `/api/partner/user/event?${query}`)).status,
          'wrong-syntax',
          query,
        );
      assert.equal((await client.call('GET', '/api/partner/user/event?timeout=36000')).status, 'ok');
      assert.equal((await client.call('GET', '/api/partner/user/event?timeout=1')).status, 'ok');
      const { client: plain } = await loggedInClient(app);
      for (const [method, url] of [
        ['GET', '/api/partner/user/event'],
        ['DELETE', '/api/partner/user/event'],
        ['GET', '/api/partner/cdr/event'],
        ['DELETE', '/api/partner/cdr/event'],
      ] as const) {
        assert.equal((await plain.call(method, url)).status, 'no-auth');
        assert.equal((await new Client(app).call(method, url)).status, 'no-session');
      }
      const noRight = await partnerSession(app, await newPartner(app, ['phone']));
      assert.equal((await noRight.call('GET', '/api/partner/cdr/event')).status, 'access-denied');
      assert.equal((await noRight.call('GET', '/api/partner/user/event')).status, 'ok');
    });

    test('several sessions split the stream; a dead one (closed, expired, not polling) gets nothing', async (t) => {
      const clock = new SettableClock();
      const app = await build(t, { dialect, clock });
      const { user, clients } = await subscribed(app, 3, '?timeout=600');
      const [a, b, c] = clients as [Client, Client, Client];
      // Whoever polls takes the event.
      const heldA = (await heldLongPoll(a, 30)).answer;
      await register(app, user.uuid, 'one_01');
      assert.deepEqual(
        ((await heldA).event as Ev[]).map((e) => e.sip),
        ['one_01'],
      );
      const heldB = (await heldLongPoll(b, 30)).answer;
      await register(app, user.uuid, 'two_01');
      assert.deepEqual(
        ((await heldB).event as Ev[]).map((e) => e.sip),
        ['two_01'],
      );
      // Nobody polls: the events wait, and the first poll takes them all, in order.
      await register(app, user.uuid, 'w1_01', 'w2_01', 'w3_01');
      assert.deepEqual(
        (await eventsOf(c)).map((e) => e.sip),
        ['w1_01', 'w2_01', 'w3_01'],
      );
      // Dead sessions: b closed, c's subscription expires; a alone gets everything.
      await b.call('DELETE', '/api/session');
      await c.call('GET', '/api/partner/user/event?timeout=1');
      clock.advance(1100);
      const heldC = (await heldLongPoll(c, 2)).answer;
      await register(app, user.uuid, 'd1_01', 'd2_01');
      assert.deepEqual((await heldC).event, []);
      assert.deepEqual(
        (await eventsOf(a, 'next=1&timeout=0')).map((e) => e.sip),
        ['d1_01', 'd2_01'],
      );
      // Every event went to exactly one session.
      const ids = [a, c].map((client) => queueOf(client).nextId);
      assert.deepEqual(ids, [3, 3]);
    });

    test("a session's filter limits what it takes; the rest goes to the others", async (t) => {
      const app = await build(t, { dialect });
      const { user, clients } = await subscribed(app, 2);
      const [a, b] = clients as [Client, Client];
      await a.call('POST', '/api/event/filter', { event: ['fax_convert'] });
      sipRegister(app, user.uuid);
      app.services.hub.emit({ users: [user.uuid] }, 'fax_convert', { fax: newUuid() });
      await published(app);
      assert.deepEqual(
        (await eventsOf(a)).map((e) => e.event),
        ['fax_convert'],
      );
      assert.deepEqual(
        (await eventsOf(b)).map((e) => e.event),
        ['sip_register'],
      );
    });

    test("CDR events: one cdr_new per CDR of the partner's users; right cdr", async (t) => {
      const { app, partner, client, stranger, user, foreign } = await twoPartners(t, dialect);
      await client.call('GET', '/api/partner/cdr/event?timeout=60');
      await stranger.call('GET', '/api/partner/cdr/event?timeout=60');
      const cdr = await app.services.cdrs.record({
        date: Date.UTC(2025, 0, 1),
        service: 'call',
        a_number: '+4930111',
        phone: '+4930222',
        owner: user.uuid,
        t_post: 5000,
      });
      assert.equal(cdr.partner, partner.uuid, "the owner's partner is recorded");
      await app.services.cdrs.record({ date: Date.UTC(2025, 0, 1), service: 'call', owner: foreign.uuid });
      await published(app);
      const events = await eventsOf(client);
      assert.deepEqual(
        events.map((e) => ({ ...e, time: 0 })),
        [
          {
            id: 0,
            time: 0,
            event: 'cdr_new',
            user: user.uuid,
            cdr: {
              id: cdr.id,
              date: cdr.date,
              service: 'call',
              root: cdr.id,
              a_number: '+4930111',
              phone: '+4930222',
              t_pre: 0,
              t_post: 5000,
            },
          },
        ],
      );
      assert.equal((await eventsOf(stranger)).length, 1);
      // User events are another stream.
      await register(app, user.uuid);
      assert.deepEqual((await client.call('GET', '/api/event?next=1&timeout=0')).event, []);
    });

    test('a subscription survives a restart of its node', async (t) => {
      const env = await testEnv(t, dialect);
      const first = await buildApp(loadConfig(env));
      const { user, clients } = await subscribed(first, 1);
      await first.close();
      const second = await buildApp(loadConfig(env));
      t.after(() => second.close());
      const again = new Client(second);
      again.sid = clients[0]!.sid;
      await register(second, user.uuid);
      assert.deepEqual(
        (await eventsOf(again)).map((e) => e.event),
        ['sip_register'],
      );
    });
  });

  describe(`partner CDR list and calls (${dialect})`, () => {
    test('GET /api/partner/cdr/{phone}: paging, count to 5000, wrong-phone, access-denied', async (t) => {
      const { app, partner, other, client, stranger, user, foreign } = await twoPartners(t, dialect);
      const { phones, cdrs, writer } = app.services;
      await phones.addNumber('+4930100', { partnerUuid: partner.uuid, userUuid: user.uuid });
      await phones.addNumber('+4930101', { partnerUuid: partner.uuid });
      await phones.addNumber('+4930200', { partnerUuid: other.uuid, userUuid: foreign.uuid });
      const base = Date.UTC(2024, 0, 1);
      const ids: string[] = [];
      await writer.write(async (w) => {
        for (let i = 0; i < 1203; i++) {
          const cdr = await cdrs.recordCdr(w, {
            date: base + i * 1000,
            service: 'call',
            phone: '+4930100',
            a_number: '+4930999',
            owner: user.uuid,
          });
          ids.push(cdr.id);
        }
        // The number's records of another partner's time, and another number's.
        await cdrs.recordCdr(w, { date: base, service: 'call', phone: '+4930100', owner: foreign.uuid });
        await cdrs.recordCdr(w, { date: base, service: 'call', phone: '+4930200', owner: foreign.uuid });
      });
      const page = await client.call('GET', '/api/partner/cdr/+4930100');
      assert.equal(page.status, 'ok');
      const list = page.cdr as { id: string; owner?: string; date: number; phone: string }[];
      assert.deepEqual(
        list.map((c) => c.id),
        ids.slice(0, 10),
      );
      assert.deepEqual(Object.keys(list[0]!).sort(), [
        'a_number',
        'date',
        'id',
        'phone',
        'root',
        'service',
        't_post',
        't_pre',
      ]);
      const all = (await client.call('GET', '/api/partner/cdr/+4930100?count=5000')).cdr as { id: string }[];
      assert.deepEqual(
        all.map((c) => c.id),
        ids,
      );
      const desc = (await client.call('GET', '/api/partner/cdr/+4930100?order=desc&count=3')).cdr as {
        id: string;
      }[];
      assert.deepEqual(
        desc.map((c) => c.id),
        ids.slice(-3).reverse(),
      );
      const after = (await client.call('GET', `/api/partner/cdr/+4930100?start=${ids[99]}&count=2`)).cdr as {
        id: string;
      }[];
      assert.deepEqual(
        after.map((c) => c.id),
        ids.slice(100, 102),
      );
      const from = base / 1000 + 500;
      const window = (await client.call('GET', `/api/partner/cdr/+4930100?from=${from}&to=${from + 2}`))
        .cdr as {
        date: number;
      }[];
      assert.deepEqual(
        window.map((c) => c.date),
        [0, 1, 2].map((i) => (from + i) * 1000),
      );
      assert.deepEqual((await client.call('GET', '/api/partner/cdr/+4930100?from=4102444800')).cdr, []);
      for (const [url, status] of [
        ['/api/partner/cdr/+4930200', 'wrong-phone'],
        ['/api/partner/cdr/+4930101', 'wrong-phone'],
        ['/api/partner/cdr/+4930999', 'wrong-phone'],
        ['/api/partner/cdr/4930100', 'wrong-syntax'],
        ['/api/partner/cdr/+4930100?count=0', 'wrong-syntax'],
        ['/api/partner/cdr/+4930100?count=5001', 'wrong-syntax'],
        ['/api/partner/cdr/+4930100?from=10&to=5', 'wrong-syntax'],
        ['/api/partner/cdr/+4930100?order=up', 'wrong-syntax'],
        ['/api/partner/cdr/+4930100?start=nope', 'wrong-syntax'],
      ] as const) {
        assert.equal((await client.call('GET', url)).status, status, url);
      }
      // The other partner sees none of this partner's numbers, and its own number only its records.
      assert.equal((await stranger.call('GET', '/api/partner/cdr/+4930100')).status, 'wrong-phone');
      assert.deepEqual(
        ((await stranger.call('GET', '/api/partner/cdr/+4930200')).cdr as unknown[]).length,
        1,
      );
      const noRight = await partnerSession(app, await newPartner(app, ['phone']));
      assert.equal((await noRight.call('GET', '/api/partner/cdr/+4930100')).status, 'access-denied');
      const { client: plain } = await loggedInClient(app);
      assert.equal((await plain.call('GET', '/api/partner/cdr/+4930100')).status, 'no-auth');
    });

    test('GET /api/partner/user/{uuid}/calls: every number of the user with its calls; wrong-user', async (t) => {
      const { app, partner, client, stranger, user } = await twoPartners(t, dialect);
      await app.services.phones.addNumber('+4930100', { partnerUuid: partner.uuid, userUuid: user.uuid });
      await app.services.phones.addNumber('+4930101', { userUuid: user.uuid });
      assert.deepEqual(await client.call('GET', `/api/partner/user/${user.uuid}/calls`), {
        status: 'ok',
        phones: { '+4930100': 0, '+4930101': 0 },
      });
      const bare = await buildUser(app, { partnerUuid: partner.uuid });
      assert.deepEqual(await client.call('GET', `/api/partner/user/${bare.uuid}/calls`), {
        status: 'ok',
        phones: {},
      });
      for (const uuid of [newUuid(), (await buildUser(app)).uuid]) {
        assert.equal((await client.call('GET', `/api/partner/user/${uuid}/calls`)).status, 'wrong-user');
      }
      assert.equal((await stranger.call('GET', `/api/partner/user/${user.uuid}/calls`)).status, 'wrong-user');
      assert.equal((await client.call('GET', '/api/partner/user/nope/calls')).status, 'wrong-syntax');
    });
  });
}

describe('partner event streams on two nodes (postgres)', () => {
  async function twoNodes(t: TestContext) {
    const env = await testEnv(t, 'postgres');
    const nodeA = await buildApp(loadConfig(env));
    t.after(() => nodeA.close());
    const nodeB = await buildApp(loadConfig({ ...env, PUBLIC_URL: 'http://127.0.0.2:8080' }));
    t.after(() => nodeB.close());
    return { nodeA, nodeB };
  }

  test('sessions on two nodes split the stream; nothing is lost or duplicated; a dead one is skipped', async (t) => {
    const { nodeA, nodeB } = await twoNodes(t);
    const partner = await newPartner(nodeA);
    const user = await buildUser(nodeA, { partnerUuid: partner.uuid });
    const a = await partnerSession(nodeA, partner);
    const b = await partnerSession(nodeB, partner);
    await a.call('GET', '/api/partner/user/event');
    await b.call('GET', '/api/partner/user/event');
    // An event of node A reaches the session polling on node B.
    const heldB = (await heldLongPoll(b, 30)).answer;
    await register(nodeA, user.uuid, 'x0_01');
    assert.deepEqual(
      ((await heldB).event as Ev[]).map((e) => [e.sip, e.user]),
      [['x0_01', user.uuid]],
    );
    // Both poll while 40 events come from both nodes: each event to exactly one of them.
    const seen: string[][] = [[], []];
    let stop = false;
    const pollers = [a, b].map(async (client, i) => {
      let next = queueOf(client).nextId;
      while (!stop) {
        const events = (await client.call('GET', `/api/event?next=${next}&timeout=1`)).event as Ev[];
        for (const event of events) seen[i]!.push(event.sip as string);
        if (events.length > 0) next = events.at(-1)!.id + 1;
      }
    });
    // Both pollers hold a long-poll before the first event.
    await until(() => queueOf(a).waiting > 0 && queueOf(b).waiting > 0, 'both sessions poll');
    const sent: string[] = [];
    for (let i = 0; i < 40; i++) {
      const name = `e${i}_01`;
      sent.push(name);
      sipRegister(i % 2 === 0 ? nodeA : nodeB, user.uuid, name);
      if (i % 5 === 4) await published(nodeA, nodeB);
    }
    await published(nodeA, nodeB);
    await until(() => seen[0]!.length + seen[1]!.length >= 40, 'all 40 events were taken');
    stop = true;
    await Promise.all(pollers);
    const all = [...seen[0]!, ...seen[1]!];
    assert.equal(all.length, 40, 'nothing duplicated');
    assert.deepEqual([...new Set(all)].sort(), [...sent].sort(), 'nothing lost');
    // B's session ends: all of its share goes to A, whichever node publishes.
    await b.call('DELETE', '/api/session');
    await register(nodeB, user.uuid, 'z1_01', 'z2_01');
    const rest = (await a.call('GET', `/api/event?next=${queueOf(a).nextVisible}&timeout=0`)).event as Ev[];
    const late: string[] = rest.map((e) => e.sip as string);
    while (late.length < 2) {
      const more = (await a.call('GET', '/api/event?timeout=1')).event as Ev[];
      late.push(...more.map((e) => e.sip as string));
    }
    assert.deepEqual(late, ['z1_01', 'z2_01']);
  });
});
