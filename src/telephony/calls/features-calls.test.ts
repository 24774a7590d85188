/**
 * Calls leaving the platform and the call features on real calls:
 * baresips register as SIP accounts through the Kamailio Zentrale starts; the carrier is a
 * stand-in on its own loopback address (test/carrier.ts) that answers numbers with tones and
 * places calls from numbers. What each side hears is checked with a Goertzel filter, what
 * the carrier received (From, P-Asserted-Identity, Privacy) from its INVITEs, and the CDRs.
 *
 * Audio arrives in real time: a test waits until each side has heard what it needs (`hears`,
 * `carrier.hears`) before it hangs up, never a fixed time.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cdrsOf,
  dial,
  hangUp,
  heard,
  hears,
  numberOwner,
  phone,
  sipAccount,
  telephonyNode,
  telephonyNodesOnPostgres,
  tone,
  windowsOf,
} from '../../../test/calls.js';
import { type Carrier, startCarrier } from '../../../test/carrier.js';
import { buildUser, loggedInClient, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import type { App } from '../../app.js';
import { newUuid } from '../../platform/ids.js';

requireTelephonyPackages();

async function carrierNode(
  t: Parameters<typeof telephonyNode>[0],
): Promise<{ carrier: Carrier; node: Awaited<ReturnType<typeof telephonyNode>> }> {
  const carrier = await startCarrier(t);
  const node = await telephonyNode(t, { CARRIER_URI: carrier.uri });
  return { carrier, node };
}

/** A user of a partner (with the callfilter right) holding `number` from the partner's pool. */
async function partnerUser(app: App, number: string) {
  const partner = await app.services.partners.createPartner(`p${Date.now()}`, 'partner-key', [
    'phone',
    'callfilter',
  ]);
  const user = await buildUser(app, { partnerUuid: partner.uuid });
  await app.services.phones.addNumber(number, { partnerUuid: partner.uuid });
  await app.services.phones.changePartnerNumbers(partner.uuid, user.uuid, { create: { [number]: {} } });
  return { partner, user };
}

test("to the carrier: dial_prefix completes a short number, clip_number is the caller id, the number's p_asserted_identity goes as P-Asserted-Identity; clir withholds the caller id", async (t) => {
  const { carrier, node } = await carrierNode(t);
  const { app } = node;
  const { partner, user } = await partnerUser(app, '+4930777001');
  await app.services.phones.changePartnerNumbers(partner.uuid, user.uuid, {
    update: { '+4930777001': { p_asserted_identity: '+4930777999' } },
  });
  await app.services.dialplans.updateLegacyDialplan(user.uuid, {
    dial_prefix: '+4940',
    clip_number: '+4930777001',
  });
  carrier.answer('+4940123456', { tone: 1000 });
  const alice = await sipAccount(app, 'alice_01', user.uuid);
  const a = await phone(t, node, alice, { answerMode: 'manual', microphone: tone(600) });

  await dial(a, '123456');
  const call = await carrier.callTo('+4940123456');
  // Well over the second of talk the CDR must show (40 windows: 1.2 s).
  await Promise.all([hears(a, 1000, 40), carrier.hears(call, 600, 30)]);
  await hangUp(a);
  await call.ended;
  assert.match(call.headers.get('from') ?? '', /<sip:\+4930777001@/);
  assert.match(call.headers.get('p-asserted-identity') ?? '', /<sip:\+4930777999@/);
  assert.equal(call.headers.get('privacy'), undefined);
  const atA = heard(a);
  assert.ok(
    windowsOf(atA, 1000) >= 30,
    `alice heard the far end's 1000 Hz in ${windowsOf(atA, 1000)} windows`,
  );
  const atCarrier = await carrier.heard(call.recorder!, [600, 1000]);
  assert.ok((atCarrier.get(600) ?? 0) >= 30, `the far end heard alice's 600 Hz: ${atCarrier.get(600)}`);

  // clir_enable: anonymous From, Privacy: id; the asserted identity stays for the network.
  await app.services.dialplans.updateLegacyDialplan(user.uuid, { clir_enable: true });
  await dial(a, '00494099');
  const hidden = await carrier.callTo('+494099');
  await hangUp(a);
  assert.match(hidden.headers.get('from') ?? '', /anonymous@anonymous\.invalid/);
  assert.doesNotMatch(hidden.headers.get('from') ?? '', /4930777001/);
  assert.equal(hidden.headers.get('privacy'), 'id');

  // One CDR per call: outgoing, b_number the completed number, phone the caller id, ms fields.
  const cdrs = await cdrsOf(app, user.uuid, 2);
  const first = cdrs.find((cdr) => cdr.b_number === '+4940123456');
  assert.ok(first, JSON.stringify(cdrs));
  assert.equal(first.service, 'call');
  assert.equal(first.phone, '+4930777001');
  assert.equal(first.partner, partner.uuid);
  assert.equal(first.root, first.id);
  assert.ok(first.date > 1e12, 'date in ms');
  assert.ok(first.t_post >= 1000, `talked for seconds: ${first.t_post} ms`);
  assert.equal(await app.database.db.selectFrom('running_call').select('id').executeTakeFirst(), undefined);
});

test("the partner's call filter runs on every outgoing call (403 when it denies, its replacement dialled), and the concurrent-call quota refuses a call beyond it (486)", async (t) => {
  const { carrier, node } = await carrierNode(t);
  const { app } = node;
  const { partner, user } = await partnerUser(app, '+4930777002');
  await app.services.callFilters.setFilter(partner.uuid, user.uuid, [
    { type: 'match', key: '^\\+4990', pass: false },
    { type: 'replace', key: '^\\+4941', value: '+4942' },
    { type: 'service', key: 'sip', pass: true },
  ]);
  const a = await phone(t, node, await sipAccount(app, 'alice_01', user.uuid), { answerMode: 'manual' });
  const b = await phone(t, node, await sipAccount(app, 'alice_02', user.uuid), { answerMode: 'manual' });

  let closed = a.waitFor('CALL_CLOSED', 20_000);
  a.command('dial', '+4990123456');
  assert.match(JSON.stringify(await closed), /403/);
  assert.equal(carrier.calls.length, 0, 'nothing reached the carrier');

  carrier.answer('+4942555', { tone: 1000 });
  await dial(a, '+4941555');
  await carrier.callTo('+4942555');
  // The default pack allows 2 calls; with 1, a second call of the user is refused as busy.
  await app.services.features.updatePack('default', { quota: { calls: 1 } });
  closed = b.waitFor('CALL_CLOSED', 20_000);
  b.command('dial', '+4942556');
  assert.match(JSON.stringify(await closed), /486/);
  await hangUp(a);
  assert.deepEqual(
    carrier.calls.map((call) => call.number),
    ['+4942555'],
  );

  // The quota is one over the nodes sharing the database: a call of the user that another node
  // admitted (its row in call_admission) takes the one allowed, and this node refuses (486).
  const elsewhere = {
    id: newUuid(),
    node: 'other-host/10.0.0.2:5060',
    owner: user.uuid,
    heartbeat: Date.now(),
  };
  await app.database.db.insertInto('call_admission').values(elsewhere).execute();
  closed = a.waitFor('CALL_CLOSED', 20_000);
  a.command('dial', '+4942557');
  assert.match(JSON.stringify(await closed), /486/);
  // A node silent for longer than its heartbeats allow is gone: its calls count no more.
  await app.database.db
    .updateTable('call_admission')
    .set({ heartbeat: Date.now() - 600_000 })
    .where('id', '=', elsewhere.id)
    .execute();
  carrier.answer('+4942558', { tone: 1000 });
  await dial(a, '+4942558');
  await carrier.callTo('+4942558');
  await hangUp(a);
  assert.deepEqual(
    carrier.calls.map((call) => call.number),
    ['+4942555', '+4942558'],
  );
  await app.services.features.updatePack('default', { quota: { calls: 2 } });
});

test("the usergroup's call limit counts all members' calls over the nodes: a member's call beyond it is refused (486), another group's user is not held back", async (t) => {
  const { carrier, node } = await carrierNode(t);
  const { app } = node;
  const partner = await app.services.partners.createPartner(`p${Date.now()}`, 'partner-key', [
    'phone',
    'usergroup',
  ]);
  const alice = await buildUser(app, { partnerUuid: partner.uuid });
  const bob = await buildUser(app, { partnerUuid: partner.uuid });
  const carol = await buildUser(app, { partnerUuid: partner.uuid });
  const groups = app.services.usergroups;
  const group = await groups.createUsergroup(partner.uuid, {});
  await groups.changeMembers(partner.uuid, group, { users: { add: [alice.uuid, bob.uuid] } });
  await groups.setSetting(partner.uuid, group, { call_limit: 1 });
  const a = await phone(t, node, await sipAccount(app, 'alice_01', alice.uuid), { answerMode: 'manual' });
  const b = await phone(t, node, await sipAccount(app, 'bob_01', bob.uuid), { answerMode: 'manual' });
  const c = await phone(t, node, await sipAccount(app, 'carol_01', carol.uuid), { answerMode: 'manual' });
  carrier.answer('+4942601', { tone: 1000 });
  carrier.answer('+4942603', { tone: 1000 });
  carrier.answer('+4942604', { tone: 1000 });

  // Alice's call takes the group's one; Bob (each user's own quota is 2) is refused as busy.
  await dial(a, '+4942601');
  await carrier.callTo('+4942601');
  let closed = b.waitFor('CALL_CLOSED', 20_000);
  b.command('dial', '+4942602');
  assert.match(JSON.stringify(await closed), /486/);
  // Carol is in no group: her call goes out.
  await dial(c, '+4942603');
  await carrier.callTo('+4942603');
  await hangUp(c);
  await hangUp(a);

  // A member's call another node carries counts too.
  await app.database.db
    .insertInto('call_admission')
    .values({ id: newUuid(), node: 'other-host/10.0.0.2:5060', owner: alice.uuid, heartbeat: Date.now() })
    .execute();
  closed = b.waitFor('CALL_CLOSED', 20_000);
  b.command('dial', '+4942602');
  assert.match(JSON.stringify(await closed), /486/);
  // A limit of 0 means none: Bob's call goes out.
  await groups.setSetting(partner.uuid, group, { call_limit: 0 });
  await dial(b, '+4942604');
  await carrier.callTo('+4942604');
  await hangUp(b);
  assert.deepEqual(
    carrier.calls.map((call) => call.number),
    ['+4942601', '+4942603', '+4942604'],
  );
});

test("call-through: *98 from the SIP account connects the saved phone once; the filter number calling the user's number does too", async (t) => {
  const { carrier, node } = await carrierNode(t);
  const { app } = node;
  const { client, user } = await numberOwner(app, '+4930777003');
  await app.services.dialplans.updateLegacyDialplan(user.uuid, { dial_prefix: '+4940' });
  carrier.answer('+4940555', { tone: 1000 });
  const a = await phone(t, node, await sipAccount(app, 'alice_01', user.uuid), {
    answerMode: 'manual',
    microphone: tone(600),
  });

  // Nothing pending: *98 is refused.
  let closed = a.waitFor('CALL_CLOSED', 20_000);
  a.command('dial', '*98');
  assert.match(JSON.stringify(await closed), /404/);

  assert.equal((await client.call('POST', '/api/dialplan/callthrough', { phone: '555' })).status, 'ok');
  await dial(a, '*98');
  const through = await carrier.callTo('+4940555');
  await Promise.all([hears(a, 1000, 30), carrier.hears(through, 600, 30)]);
  await hangUp(a);
  const atA = heard(a);
  assert.ok(windowsOf(atA, 1000) >= 30, `connected to the saved phone: ${windowsOf(atA, 1000)} windows`);
  assert.ok(((await carrier.heard(through.recorder!, [600])).get(600) ?? 0) >= 30);
  // One-shot: used up.
  closed = a.waitFor('CALL_CLOSED', 20_000);
  a.command('dial', '*98');
  assert.match(JSON.stringify(await closed), /404/);

  // From outside: the filter number calls the user's number and reaches the saved phone.
  carrier.answer('+4940777', { tone: 1400 });
  assert.equal(
    (await client.call('POST', '/api/dialplan/callthrough', { phone: '+4940777', filter: '+4917012345' }))
      .status,
    'ok',
  );
  const { status, leg, recorder } = await carrier.dial(
    `127.0.0.1:${node.sipPort}`,
    '+4917012345',
    '+4930777003',
    425,
  );
  assert.equal(status, 200);
  const saved = await carrier.callTo('+4940777');
  await Promise.all([carrier.hears({ leg }, 1400, 30), carrier.hears(saved, 425, 30)]);
  await leg.hangup();
  await saved.ended;
  assert.ok(
    ((await carrier.heard(recorder!, [1400])).get(1400) ?? 0) >= 30,
    'the caller hears the saved phone',
  );
  assert.ok(
    ((await carrier.heard(saved.recorder!, [425])).get(425) ?? 0) >= 30,
    'the saved phone hears the caller',
  );

  const cdrs = await cdrsOf(app, user.uuid, 4);
  const services = cdrs.map((cdr) => cdr.service);
  assert.deepEqual([...new Set(services)], ['call_through']);
  const outside = cdrs.find((cdr) => cdr.a_number === '+4917012345');
  assert.ok(outside && outside.phone === '+4930777003', JSON.stringify(cdrs));
  const child = cdrs.find((cdr) => cdr.parent === outside.id);
  assert.equal(child?.b_number, '+4940777');
  assert.equal(child?.root, outside.id);
});

test('callback: cti_via is called first, then `to`, bridged; `from` is the caller id on both legs; two CDRs, parent and child', async (t) => {
  const { carrier, node } = await carrierNode(t);
  const { app } = node;
  const { client, user } = await loggedInClient(app);
  await app.services.phones.addNumber('+4930777004', { userUuid: user.uuid }, false);
  await app.services.phones.setSwitches('+4930777004', { dialplan_enable: true });
  await app.services.dialplans.updateLegacyDialplan(user.uuid, { cti_via: '+4940100' });
  carrier.answer('+4940100', { tone: 600 });
  carrier.answer('+4940200', { tone: 1000 });

  const requested = await client.call('POST', '/api/dialplan/callback', {
    from: '+4930777004',
    to: '+4940200',
  });
  assert.equal(requested.status, 'ok', JSON.stringify(requested));
  const via = await carrier.callTo('+4940100');
  const to = await carrier.callTo('+4940200');
  assert.ok(carrier.calls.indexOf(via) < carrier.calls.indexOf(to), 'cti_via first');
  // Well over the second of talk the CDRs must show (40 windows: 1.2 s).
  await Promise.all([carrier.hears(via, 1000, 40), carrier.hears(to, 600, 40)]);
  await via.leg!.hangup();
  await to.ended;
  assert.match(via.headers.get('from') ?? '', /<sip:\+4930777004@/);
  assert.match(to.headers.get('from') ?? '', /<sip:\+4930777004@/);
  assert.ok(((await carrier.heard(via.recorder!, [600, 1000])).get(1000) ?? 0) >= 30, 'cti_via hears `to`');
  assert.ok(((await carrier.heard(to.recorder!, [600, 1000])).get(600) ?? 0) >= 30, '`to` hears cti_via');

  const cdrs = await cdrsOf(app, user.uuid, 2);
  const parent = cdrs.find((cdr) => cdr.b_number === '+4940100');
  const child = cdrs.find((cdr) => cdr.b_number === '+4940200');
  assert.ok(parent && child, JSON.stringify(cdrs));
  assert.deepEqual([parent.service, child.service], ['call_back', 'call_back']);
  assert.equal(child.parent, parent.id);
  assert.equal(child.root, parent.id);
  assert.ok(parent.t_post >= child.t_post && child.t_post >= 1000, JSON.stringify(cdrs));
});

test('a restart closes the calls the last run left running: their CDRs are written when the engine starts again', async (t) => {
  const node = await telephonyNode(t);
  const { app } = node;
  const user = await buildUser(app);
  const engine = app.services.telephony.calls!;
  const started = Date.now() - 30_000;
  // What a node that stopped without ending its calls leaves behind (the engine writes this row per leg).
  const leftOver = {
    id: newUuid(),
    node: engine.node,
    owner: user.uuid,
    service: 'call',
    direction: 'out',
    number: '+4940999',
    phone: null,
    parent: null,
    date: started,
    answered: started + 3000,
    heartbeat: started + 20_000,
  };
  await app.database.db.insertInto('running_call').values(leftOver).execute();
  await app.services.telephony.stop();
  await app.services.telephony.start();
  assert.ok(app.services.telephony.calls, 'the engine runs again');
  const [cdr] = await cdrsOf(app, user.uuid, 1);
  assert.ok(cdr, 'the left-over call has its CDR');
  assert.deepEqual(
    [cdr.id, cdr.b_number, cdr.date, cdr.t_pre, cdr.t_post],
    [leftOver.id, '+4940999', started, 3000, 17_000],
  );
  assert.equal(await app.database.db.selectFrom('running_call').select('id').executeTakeFirst(), undefined);
  // New calls work after the restart.
  const a = await phone(t, node, await sipAccount(app, 'alice_01'), { answerMode: 'manual' });
  const closed = a.waitFor('CALL_CLOSED', 20_000);
  a.command('dial', '+4990000');
  assert.match(JSON.stringify(await closed), /403/);
});

test("dialplan v2 linear and cyclic: a target's own clip_number is the caller id it sees (From), the action's clip_number the others'; cyclic's next call starts at the next target", async (t) => {
  const { carrier, node } = await carrierNode(t);
  const { app } = node;
  const { client } = await numberOwner(app, '+4930777005');
  carrier.answer('+4940601', { reject: 486 });
  carrier.answer('+4940602', { tone: 1000 });
  carrier.answer('+4940603', { tone: 1000 });
  carrier.answer('+4940604', { tone: 1000 });
  const linear = await client.call('POST', '/api/dialplan/v2', {
    dialplan: {
      profiles: [
        {
          linear: {
            targets: [
              { target: '+4940601', timeout: 10, clip_number: '+4930777011' },
              { target: '+4940602', timeout: 10 },
            ],
            clip_number: '+4930777010',
          },
        },
      ],
    },
  });
  assert.equal(linear.status, 'ok', JSON.stringify(linear));
  const set = await client.call('POST', '/api/phone', {
    phone: { '+4930777005': { dialplan: linear.uuid } },
  });
  assert.equal(set.status, 'ok', JSON.stringify(set));
  const a = await phone(t, node, await sipAccount(app, 'alice_01'), { answerMode: 'manual' });

  // The first target is busy: the second rings, each with its caller id.
  await dial(a, '+4930777005');
  const busy = await carrier.callTo('+4940601');
  const second = await carrier.callTo('+4940602');
  await hears(a, 1000, 10); // bridged to the second target
  await hangUp(a);
  await second.ended;
  assert.equal(busy.leg, undefined, 'the busy target never answered');
  assert.match(busy.headers.get('from') ?? '', /<sip:\+4930777011@/);
  assert.match(second.headers.get('from') ?? '', /<sip:\+4930777010@/);

  // cyclic: the same per target; and the round-robin kept per dialplan: the next call starts at the next target.
  const cyclic = await client.call('POST', `/api/dialplan/v2/${linear.uuid}`, {
    dialplan: {
      profiles: [
        {
          cyclic: {
            targets: [{ target: '+4940603', clip_number: '+4930777012' }, { target: '+4940604' }],
          },
        },
      ],
    },
  });
  assert.equal(cyclic.status, 'ok', JSON.stringify(cyclic));
  await dial(a, '+4930777005');
  const third = await carrier.callTo('+4940603');
  await hangUp(a);
  await third.ended;
  assert.match(third.headers.get('from') ?? '', /<sip:\+4930777012@/);
  await dial(a, '+4930777005');
  const fourth = await carrier.callTo('+4940604');
  await hangUp(a);
  await fourth.ended;
  assert.doesNotMatch(fourth.headers.get('from') ?? '', /\+4930777012/);
});

test("110 and 112 go to the control centre of the user's emergency data with the uui_header as User-to-User and the caller id shown; call filter, dial_prefix, quota and CLIR never hold them back", async (t) => {
  const { carrier, node } = await carrierNode(t);
  const { app } = node;
  const partner = await app.services.partners.createPartner(`p${Date.now()}`, 'partner-key', [
    'phone',
    'callfilter',
    'emergency',
  ]);
  const user = await buildUser(app, { partnerUuid: partner.uuid });
  await app.services.phones.addNumber('+4930777006', { partnerUuid: partner.uuid });
  await app.services.phones.changePartnerNumbers(partner.uuid, user.uuid, { create: { '+4930777006': {} } });
  await app.services.emergency.setEmergencyData(partner.uuid, user.uuid, {
    uui_header: 'loc=Berlin Mitte',
    emergency_police: '+493011001',
    emergency_rescue: '+493011201',
  });
  // Everything is denied, short numbers would become +4930..., the caller id is withheld, no call allowed.
  await app.services.callFilters.setFilter(partner.uuid, user.uuid, [
    { type: 'match', key: '.', pass: false },
  ]);
  await app.services.dialplans.updateLegacyDialplan(user.uuid, {
    dial_prefix: '+4930',
    clip_number: '+4930777006',
    clir_enable: true,
  });
  await app.services.features.updatePack('default', { quota: { calls: 0 } });
  carrier.answer('+493011001', { tone: 1000 });
  carrier.answer('+493011201', { tone: 1000 });
  const a = await phone(t, node, await sipAccount(app, 'alice_01', user.uuid), {
    answerMode: 'manual',
    microphone: tone(600),
  });

  // An ordinary call is refused (the filter); 110 reaches the police control centre.
  const closed = a.waitFor('CALL_CLOSED', 20_000);
  a.command('dial', '+4940123');
  assert.match(JSON.stringify(await closed), /403/);
  await dial(a, '110');
  const police = await carrier.callTo('+493011001');
  await Promise.all([hears(a, 1000, 30), carrier.hears(police, 600, 30)]);
  await hangUp(a);
  assert.match(police.headers.get('from') ?? '', /<sip:\+4930777006@/);
  assert.equal(police.headers.get('privacy'), undefined);
  assert.equal(
    police.headers.get('user-to-user'),
    `${Buffer.from('loc=Berlin Mitte').toString('hex')};encoding=hex`,
  );
  assert.ok(((await carrier.heard(police.recorder!, [600])).get(600) ?? 0) >= 30, 'the centre hears alice');
  assert.ok(windowsOf(heard(a), 1000) >= 30, 'alice hears the centre');

  // 112: the rescue control centre; without emergency data, 112 itself goes to the carrier.
  await dial(a, '112');
  await carrier.callTo('+493011201');
  await hangUp(a);
  await app.services.emergency.setEmergencyData(partner.uuid, user.uuid, {
    uui_header: '',
    emergency_police: '',
    emergency_rescue: '',
  });
  carrier.answer('112', { tone: 1000 });
  await dial(a, '112');
  const plain = await carrier.callTo('112');
  await hangUp(a);
  assert.equal(plain.headers.get('user-to-user'), undefined);
  assert.deepEqual(
    carrier.calls.map((call) => call.number),
    ['+493011001', '+493011201', '112'],
  );
  await app.services.features.updatePack('default', { quota: { calls: 2 } });
});

test('two nodes on one PostgreSQL: a call node A carries counts for the quota on node B (486), and B counts the calls to the number too', async (t) => {
  const carrier = await startCarrier(t);
  const [a, b] = await telephonyNodesOnPostgres(t, 2, { CARRIER_URI: carrier.uri });
  const nodeA = a!;
  const nodeB = b!;
  const { client, user } = await numberOwner(nodeA.app, '+4930777007');
  carrier.answer('+4942003', { ring: true });
  carrier.answer('+4942004', { tone: 1000 });
  const dialplan = await client.call('POST', '/api/dialplan/v2', {
    dialplan: { profiles: [{ parallel: { targets: ['+4942003'], timeout: 60 } }] },
  });
  assert.equal(dialplan.status, 'ok', JSON.stringify(dialplan));
  await client.call('POST', '/api/phone', { phone: { '+4930777007': { dialplan: dialplan.uuid } } });
  await nodeA.app.services.features.updatePack('default', { quota: { calls: 1 } });
  const caller = await phone(t, nodeA, await sipAccount(nodeA.app, 'xavier_01'), { answerMode: 'manual' });
  const own = await phone(t, nodeB, await sipAccount(nodeB.app, 'ulla_01', user.uuid), {
    answerMode: 'manual',
  });
  const count = async () =>
    (await nodeB.app.services.telephony.activeCalls(['+4930777007']))['+4930777007'] ?? 0;

  // A call to the user's number rings on node A: node B sees it, and refuses the user's own call.
  caller.command('dial', '+4930777007');
  await carrier.callTo('+4942003');
  await until(async () => (await count()) > 0, 'node B counts the call node A carries');
  assert.equal(await count(), 1, 'node B counts the call node A carries');
  let closed = own.waitFor('CALL_CLOSED', 20_000);
  own.command('dial', '+4942004');
  assert.match(JSON.stringify(await closed), /486/);

  // Once it ended, the user's call goes out through node B.
  closed = caller.waitFor('CALL_CLOSED', 20_000);
  caller.command('hangup');
  await closed;
  await until(async () => (await count()) === 0, 'node B no longer counts the ended call');
  // Node A's admission of the call goes right after its CDRs.
  const admissions = () => nodeB.app.database.db.selectFrom('call_admission').select('id').execute();
  await until(async () => (await admissions()).length === 0, "node A's admission released");
  await dial(own, '+4942004');
  await carrier.callTo('+4942004');
  await hangUp(own);
  assert.deepEqual(
    carrier.calls.map((call) => call.number),
    ['+4942003', '+4942004'],
  );
});
