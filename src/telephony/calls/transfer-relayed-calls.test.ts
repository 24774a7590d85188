/**
 * Blind transfer of a call rtpengine relays between two phones (docs/decisions.md "Call control:
 * transfer and bridge"): alice's baresip (600 Hz, the user's account) calls bob's (1000 Hz); the
 * API transfers bob to carol (1400 Hz): Zentrale calls carol in a new rtpengine session, moves
 * bob there with a re-INVITE and hangs up alice. Tones prove who hears whom, and in which order.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import {
  cancelsWhileRinging,
  cdrsOf,
  consultsThenCompletes,
  eventsOf,
  heard,
  heardBefore,
  heardSoFar,
  hears,
  telephonyNode,
  tonePhone,
  windowsOf,
} from '../../../test/calls.js';
import { loggedInClient, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

/** alice (the user's, 600 Hz) calling bob (1000 Hz), ringing; carol (1400 Hz) to transfer to. */
async function aliceRingsBob(t: TestContext) {
  const node = await telephonyNode(t);
  const { client, user } = await loggedInClient(node.app);
  const alice = await tonePhone(t, node, 'alice_01', 600, user.uuid);
  const bob = await tonePhone(t, node, 'bob_01', 1000);
  const carol = await tonePhone(t, node, 'carol_01', 1400);
  const incoming = bob.waitFor('CALL_INCOMING', 20_000);
  alice.command('dial', 'bob_01');
  await incoming;
  const [listed] = (await client.call('GET', '/api/call')).call as { uuid: string }[];
  const answer = async () => {
    const established = alice.waitFor('CALL_ESTABLISHED', 20_000);
    bob.command('accept');
    await established;
    await Promise.all([hears(alice, 1000, 20), hears(bob, 600, 20)]);
  };
  return { node, client, user, alice, bob, carol, uuid: listed!.uuid, answer };
}

test("blind transfer of a phone-to-phone call: bob ends up with carol, alice's phone is released", async (t) => {
  const { node, client, user, alice, bob, carol, uuid, answer } = await aliceRingsBob(t);
  assert.equal((await client.call('GET', '/api/call/event')).status, 'ok');
  const steer = (body: Record<string, unknown>) => client.call('POST', `/api/call/${uuid}/control`, body);
  // Ringing: nothing is connected yet that could be transferred.
  assert.equal((await steer({ command: 'transfer', target: { sip: 'carol_01' } })).status, 'illegal-state');
  await answer();
  // rtpengine relays this call: Zentrale has no media leg of it.
  assert.equal(node.app.services.telephony.calls!.calls.get(uuid)!.leg, undefined);

  // Carol refuses first: fail, and alice and bob keep talking.
  const refusedRing = carol.waitFor('CALL_INCOMING', 20_000);
  const refused = steer({ command: 'transfer', target: { sip: 'carol_01' } });
  await refusedRing;
  carol.command('hangup');
  assert.equal((await refused).status, 'fail');
  await hears(bob, 600, windowsOf(heardSoFar(bob), 600) + 20);
  // The user gives up while carol rings: her phone stops, alice and bob keep talking.
  await cancelsWhileRinging(steer, carol, { command: 'transfer', target: { sip: 'carol_01' } });
  await Promise.all([
    hears(bob, 600, windowsOf(heardSoFar(bob), 600) + 20),
    hears(alice, 1000, windowsOf(heardSoFar(alice), 1000) + 20),
  ]);

  // Carol answers the second: bob is moved to her, alice's phone is hung up.
  const rings = carol.waitFor('CALL_INCOMING', 20_000);
  const aliceClosed = alice.waitFor('CALL_CLOSED', 20_000);
  const transferred = steer({ command: 'transfer', target: { sip: 'carol_01' } });
  await rings;
  carol.command('accept');
  assert.deepEqual(await transferred, { status: 'ok' });
  await aliceClosed;
  await Promise.all([hears(bob, 1400, 20), hears(carol, 1000, 20)]);
  // collect follows the call into its new rtpengine session: carol, in alice's place, is heard.
  assert.deepEqual(await steer({ command: 'collect', max_digits: 1, timeout: 30 }), { status: 'ok' });
  const keys = async () =>
    (await eventsOf(client)).filter((event) => event.event === 'call_dtmf').map((event) => event.digit);
  carol.command('sndcode', '7');
  await until(async () => (await keys()).length > 0, 'call_dtmf of 7', 20_000);
  assert.deepEqual(await keys(), ['7']);
  // The call is still the user's, in progress, until bob or carol hangs up.
  const live = (await client.call('GET', '/api/call')).call as { uuid: string; state: string }[];
  assert.deepEqual(
    live.map((call) => [call.uuid, call.state]),
    [[uuid, 'in-progress']],
  );
  const closed = [bob.waitFor('CALL_CLOSED', 20_000), carol.waitFor('CALL_CLOSED', 20_000)];
  assert.deepEqual(await steer({ command: 'hangup' }), { status: 'ok' });
  await Promise.all(closed);
  await until(
    async () => ((await client.call('GET', '/api/call')).call as unknown[]).length === 0,
    'the call ended',
  );

  // The path: bob heard alice, then carol; carol heard bob and never alice.
  assert.ok(heardBefore(heard(bob), 600, 1400), 'bob heard alice before carol');
  assert.ok(windowsOf(heard(carol, 'last'), 1000) >= 20, 'carol heard bob');
  assert.equal(windowsOf(heard(carol, 'last'), 600), 0, 'carol never heard alice');
  // Carol's three legs have their CDRs, children of the call's first; the refused and the
  // cancelled one never answered.
  const cdrs = await cdrsOf(node.app, user.uuid, 4);
  const first = cdrs.find((cdr) => cdr.parent === undefined);
  const carols = cdrs.filter((cdr) => cdr.b_number === 'carol_01');
  assert.equal(carols.length, 3, JSON.stringify(cdrs));
  assert.ok(
    carols.every((cdr) => cdr.parent === first?.id),
    JSON.stringify(cdrs),
  );
  assert.deepEqual(carols.map((cdr) => cdr.t_post > 0).sort(), [false, false, true], JSON.stringify(carols));
});

test("the user's phone transfers by itself (REFER): bob ends up with carol, told back as NOTIFY sipfrag", async (t) => {
  const { node, client, user, alice, bob, carol, uuid, answer } = await aliceRingsBob(t);
  await answer();

  const rings = carol.waitFor('CALL_INCOMING', 20_000);
  const aliceClosed = alice.waitFor('CALL_CLOSED', 20_000);
  alice.command('transfer', 'carol_01');
  await rings;
  carol.command('accept');
  // Baresip closes its call on the NOTIFY's 200 sipfrag, and says why.
  assert.equal((await aliceClosed).param, 'Call transfered');
  await Promise.all([hears(bob, 1400, 20), hears(carol, 1000, 20)]);
  // Still the user's call, now between bob and carol.
  const live = (await client.call('GET', '/api/call')).call as { uuid: string; state: string }[];
  assert.deepEqual(
    live.map((call) => [call.uuid, call.state]),
    [[uuid, 'in-progress']],
  );
  const closed = carol.waitFor('CALL_CLOSED', 20_000);
  bob.command('hangup');
  await closed;

  assert.ok(heardBefore(heard(bob), 600, 1400), 'bob heard alice before carol');
  assert.equal(windowsOf(heard(carol, 'last'), 600), 0, 'carol never heard alice');
  const cdrs = await cdrsOf(node.app, user.uuid, 2);
  assert.deepEqual(
    cdrs.filter((cdr) => cdr.b_number === 'carol_01').map((cdr) => cdr.t_post > 0),
    [true],
    JSON.stringify(cdrs),
  );
});

test('attended transfer of a phone-to-phone call: consult with carol while bob is held; cancel, then complete', async (t) => {
  const { node, client, alice, bob, carol, uuid, answer } = await aliceRingsBob(t);
  await answer();
  const steer = (body: Record<string, unknown>) => client.call('POST', `/api/call/${uuid}/control`, body);
  // rtpengine relays this call: Zentrale has no media leg of it.
  assert.equal(node.app.services.telephony.calls!.calls.get(uuid)!.leg, undefined);
  await consultsThenCompletes({ client, own: alice, far: bob, target: carol, targetSip: 'carol_01', steer });
});

test("bridge of two phone-to-phone calls: bob and dave talk, the user's phones are released", async (t) => {
  const { node, client, user, alice, bob, uuid, answer } = await aliceRingsBob(t);
  await answer();
  const second = await tonePhone(t, node, 'alice_02', 425, user.uuid);
  const dave = await tonePhone(t, node, 'dave_01', 1400);
  const daveRings = dave.waitFor('CALL_INCOMING', 20_000);
  second.command('dial', 'dave_01');
  await daveRings;
  const other = ((await client.call('GET', '/api/call')).call as { uuid: string }[]).find(
    (call) => call.uuid !== uuid,
  )!.uuid;
  const bridge = (call: string) =>
    client.call('POST', `/api/call/${uuid}/control`, { command: 'bridge', call });
  // The second call rings still: not up.
  assert.equal((await bridge(other)).status, 'illegal-state');
  const established = second.waitFor('CALL_ESTABLISHED', 20_000);
  dave.command('accept');
  await established;
  await Promise.all([hears(bob, 600, 20), hears(dave, 425, 20)]);

  const released = [alice.waitFor('CALL_CLOSED', 20_000), second.waitFor('CALL_CLOSED', 20_000)];
  assert.deepEqual(await bridge(other), { status: 'ok' });
  await Promise.all(released);
  await Promise.all([hears(bob, 1400, 20), hears(dave, 1000, 20)]);
  // The first call carries on with both parties; the other ended.
  await until(async () => {
    const live = (await client.call('GET', '/api/call')).call as { uuid: string; state: string }[];
    return live.length === 1 && live[0]!.uuid === uuid && live[0]!.state === 'in-progress';
  }, 'the other call ended, the first carries on');
  const closed = [bob.waitFor('CALL_CLOSED', 20_000), dave.waitFor('CALL_CLOSED', 20_000)];
  assert.deepEqual(await client.call('POST', `/api/call/${uuid}/control`, { command: 'hangup' }), {
    status: 'ok',
  });
  await Promise.all(closed);
  assert.ok(heardBefore(heard(bob), 600, 1400), 'bob heard alice, then dave');
  assert.ok(heardBefore(heard(dave), 425, 1000), "dave heard the user's second phone, then bob");
});
