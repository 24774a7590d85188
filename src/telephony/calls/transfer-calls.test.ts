/**
 * Blind transfer through the call API with real phones (docs/decisions.md "Call control:
 * transfer and bridge"): a click-to-dial call between the user's phone and carol; the API
 * transfers carol to dave, Zentrale calls dave, connects carol to him and releases the user's
 * phone. Tones prove who hears whom, and in which order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  clickToDial,
  eventsOf,
  heard,
  heardBefore,
  heardSoFar,
  hears,
  phone,
  sipAccount,
  telephonyNode,
  tone,
  windowsOf,
} from '../../../test/calls.js';
import { loggedInClient, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

test("blind transfer: the other party of the user's call ends up with the target, the user's phone is released", async (t) => {
  const node = await telephonyNode(t);
  const { client, own, far, call, connect } = await clickToDial(t, node);
  const dave = await phone(t, node, await sipAccount(node.app, 'dave_01'), {
    answerMode: 'manual',
    microphone: tone(1400),
  });
  const steer = (body: Record<string, unknown>) =>
    client.call('POST', `/api/call/${call.uuid}/control`, body);
  // While the user's phone rings, nothing is connected yet that could be transferred.
  assert.equal((await steer({ command: 'transfer', target: { sip: 'dave_01' } })).status, 'illegal-state');
  await connect();
  await Promise.all([hears(own, 1000, 20), hears(far, 600, 20)]);

  // Bad input changes nothing (the phones keep talking, checked below).
  assert.equal((await steer({ command: 'transfer' })).status, 'missing-element');
  assert.equal((await steer({ command: 'transfer', target: {} })).status, 'missing-element');
  assert.equal(
    (await steer({ command: 'transfer', target: { sip: 'dave_01', phone: '+4930123456' } })).status,
    'wrong-syntax',
  );
  assert.equal(
    (await steer({ command: 'transfer', target: { ivr: '00000000-0000-4000-8000-000000000000' } })).status,
    'wrong-syntax',
  );
  assert.equal((await steer({ command: 'transfer', target: { sip: 'nobody_01' } })).status, 'wrong-sip');
  const { client: stranger } = await loggedInClient(node.app);
  const strangers = await stranger.call('POST', `/api/call/${call.uuid}/control`, {
    command: 'transfer',
    target: { sip: 'dave_01' },
  });
  assert.equal(strangers.status, 'access-denied');
  const unknown = await client.call('POST', '/api/call/00000000-0000-4000-8000-000000000000/control', {
    command: 'transfer',
    target: { sip: 'dave_01' },
  });
  assert.equal(unknown.status, 'wrong-call');

  // Dave refuses the first attempt: fail, and the call stays as it was.
  const refusedRing = dave.waitFor('CALL_INCOMING', 20_000);
  const refused = steer({ command: 'transfer', target: { sip: 'dave_01' } });
  await refusedRing;
  dave.command('hangup');
  assert.equal((await refused).status, 'fail');
  const before = windowsOf(heardSoFar(own), 1000);
  await hears(own, 1000, before + 20);

  // Dave answers the second: carol is his, the user's phone is hung up.
  const rings = dave.waitFor('CALL_INCOMING', 20_000);
  const ownClosed = own.waitFor('CALL_CLOSED', 20_000);
  const transferred = steer({ command: 'transfer', target: { sip: 'dave_01' } });
  await rings;
  dave.command('accept');
  assert.deepEqual(await transferred, { status: 'ok' });
  await ownClosed;
  await Promise.all([hears(far, 1400, 20), hears(dave, 1000, 20)]);
  // The call is still the user's, in progress, until carol or dave hangs up.
  const listed = (await client.call('GET', '/api/call')).call as { uuid: string; state: string }[];
  assert.deepEqual(
    listed.map((live) => [live.uuid, live.state]),
    [[call.uuid, 'in-progress']],
  );
  const closed = [far.waitFor('CALL_CLOSED', 20_000), dave.waitFor('CALL_CLOSED', 20_000)];
  assert.deepEqual(await steer({ command: 'hangup' }), { status: 'ok' });
  await Promise.all(closed);
  await until(
    async () => ((await client.call('GET', '/api/call')).call as unknown[]).length === 0,
    'the call ended',
  );
  assert.equal((await steer({ command: 'transfer', target: { sip: 'dave_01' } })).status, 'illegal-state');

  // The path: carol heard the user, then dave; dave heard carol; the call's states told it.
  assert.ok(heardBefore(heard(far), 600, 1400), 'carol heard the user before dave');
  assert.ok(windowsOf(heard(dave, 'last'), 1000) >= 20, 'dave heard carol');
  assert.equal(windowsOf(heard(dave, 'last'), 600), 0, 'dave never heard the user');
  const updates = (await eventsOf(client)).filter((event) => event.event === 'call_update') as unknown as {
    call: { uuid: string; state: string };
  }[];
  assert.deepEqual(
    updates.map((event) => [event.call.uuid, event.call.state]),
    [
      [call.uuid, 'queued'],
      [call.uuid, 'ringing'],
      [call.uuid, 'in-progress'],
      [call.uuid, 'completed'],
    ],
  );
});
