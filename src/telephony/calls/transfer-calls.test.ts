/**
 * Blind transfer through the call API with real phones (docs/decisions.md "Call control:
 * transfer and bridge"): a click-to-dial call between the user's phone and carol; the API
 * transfers carol to dave, Zentrale calls dave, connects carol to him and releases the user's
 * phone. Tones prove who hears whom, and in which order.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import {
  cancelsWhileRinging,
  cdrsOf,
  clickToDial,
  consultsThenCompletes,
  dialVia,
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
import type { Baresip } from '../../../test/sip-peers.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

/** A click-to-dial call of the user (own phone 600 Hz, carol 1000 Hz) and dave (1400 Hz) to transfer to. */
async function withTarget(t: TestContext) {
  const node = await telephonyNode(t);
  const dialled = await clickToDial(t, node);
  const dave = await phone(t, node, await sipAccount(node.app, 'dave_01'), {
    answerMode: 'manual',
    microphone: tone(1400),
  });
  const steer = (body: Record<string, unknown>) =>
    dialled.client.call('POST', `/api/call/${dialled.call.uuid}/control`, body);
  return { ...dialled, node, dave, steer };
}

test("blind transfer: the other party of the user's call ends up with the target, the user's phone is released", async (t) => {
  const { node, client, user, own, far, call, connect, dave, steer } = await withTarget(t);
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
  // The user gives up while dave rings: his phone stops, the call stays as it was.
  await cancelsWhileRinging(steer, dave, { command: 'transfer', target: { sip: 'dave_01' } });
  await Promise.all([
    hears(own, 1000, windowsOf(heardSoFar(own), 1000) + 20),
    hears(far, 600, windowsOf(heardSoFar(far), 600) + 20),
  ]);

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
  // The CDRs: the user's phone, carol, and dave's three legs, children of the call's first; the
  // refused and the cancelled one never answered.
  const cdrs = await cdrsOf(node.app, user.uuid, 5);
  const first = cdrs.find((cdr) => cdr.parent === undefined);
  const daves = cdrs.filter((cdr) => cdr.b_number === 'dave_01');
  assert.equal(daves.length, 3, JSON.stringify(cdrs));
  assert.ok(
    daves.every((cdr) => cdr.parent === first?.id),
    JSON.stringify(cdrs),
  );
  assert.deepEqual(daves.map((cdr) => cdr.t_post > 0).sort(), [false, false, true], JSON.stringify(daves));
});

test('attended transfer: a consult with the target while the other party is held; cancel resumes, complete connects', async (t) => {
  const { client, own, far, connect, dave, steer } = await withTarget(t);
  await connect();
  await Promise.all([hears(own, 1000, 20), hears(far, 600, 20)]);
  await consultsThenCompletes({ client, own, far, target: dave, targetSip: 'dave_01', steer });
});

test("bridge: the other parties of two of the user's calls talk with each other, the user's phones are released", async (t) => {
  const node = await telephonyNode(t);
  const { client, user } = await loggedInClient(node.app);
  const mine = await phone(t, node, await sipAccount(node.app, 'mine_01', user.uuid), {
    answerMode: 'manual',
    microphone: tone(600),
  });
  const second = await phone(t, node, await sipAccount(node.app, 'mine_02', user.uuid), {
    answerMode: 'manual',
    microphone: tone(425),
  });
  const carol = await phone(t, node, await sipAccount(node.app, 'carol_01'), {
    answerMode: 'manual',
    microphone: tone(1000),
  });
  const dave = await phone(t, node, await sipAccount(node.app, 'dave_01'), {
    answerMode: 'manual',
    microphone: tone(1400),
  });
  assert.equal((await client.call('GET', '/api/call/event')).status, 'ok');
  /** A click-to-dial call of the user from `via` to `to`; `answer` connects both legs. */
  const dial = async (via: Baresip, viaName: string, to: Baresip, toName: string) => {
    const { dialled, connect } = await dialVia(client, via, viaName, to, toName);
    return { uuid: (dialled.call as { uuid: string }).uuid, answer: connect };
  };
  const first = await dial(mine, 'mine_01', carol, 'carol_01');
  await first.answer();
  const other = await dial(second, 'mine_02', dave, 'dave_01');
  const bridge = (body: Record<string, unknown>) =>
    client.call('POST', `/api/call/${first.uuid}/control`, { command: 'bridge', ...body });
  // The second call rings still: not up.
  assert.equal((await bridge({ call: other.uuid })).status, 'illegal-state');
  await other.answer();
  await Promise.all([hears(carol, 600, 20), hears(dave, 425, 20)]);

  assert.equal((await bridge({})).status, 'missing-element');
  assert.equal((await bridge({ call: 'nope' })).status, 'wrong-syntax');
  assert.equal((await bridge({ call: '00000000-0000-4000-8000-000000000000' })).status, 'wrong-call');
  assert.equal((await bridge({ call: first.uuid })).status, 'illegal-state', 'a call with itself');
  // A call of another user (ringing their phone) is not the user's to bridge.
  const { client: stranger, user: strangerUser } = await loggedInClient(node.app);
  const theirs = await phone(t, node, await sipAccount(node.app, 'theirs_01', strangerUser.uuid), {
    answerMode: 'manual',
  });
  const theirsRings = theirs.waitFor('CALL_INCOMING', 20_000);
  const strangerCall = await stranger.call('POST', '/api/call/dial', { via: 'theirs_01', to: 'carol_01' });
  await theirsRings;
  const strangerUuid = (strangerCall.call as { uuid: string }).uuid;
  assert.equal((await bridge({ call: strangerUuid })).status, 'access-denied');
  assert.equal(
    (
      await stranger.call('POST', `/api/call/${strangerUuid}/control`, {
        command: 'bridge',
        call: first.uuid,
      })
    ).status,
    'access-denied',
  );
  // The stranger's call goes before the bridge (nothing of it is left ringing at the end).
  const theirsClosed = theirs.waitFor('CALL_CLOSED', 20_000);
  const strangerHangup = await stranger.call('POST', `/api/call/${strangerUuid}/control`, {
    command: 'hangup',
  });
  assert.deepEqual(strangerHangup, { status: 'ok' });
  await theirsClosed;

  const released = [mine.waitFor('CALL_CLOSED', 20_000), second.waitFor('CALL_CLOSED', 20_000)];
  assert.deepEqual(await bridge({ call: other.uuid }), { status: 'ok' });
  await Promise.all(released);
  await Promise.all([hears(carol, 1400, 20), hears(dave, 1000, 20)]);
  // The first call carries on with both parties; the other ended.
  await until(async () => {
    const live = (await client.call('GET', '/api/call')).call as { uuid: string; state: string }[];
    return live.length === 1 && live[0]!.uuid === first.uuid && live[0]!.state === 'in-progress';
  }, 'the other call ended, the first carries on');
  const closed = [carol.waitFor('CALL_CLOSED', 20_000), dave.waitFor('CALL_CLOSED', 20_000)];
  assert.deepEqual(await client.call('POST', `/api/call/${first.uuid}/control`, { command: 'hangup' }), {
    status: 'ok',
  });
  await Promise.all(closed);
  assert.ok(heardBefore(heard(carol), 600, 1400), 'carol heard the user, then dave');
  assert.ok(heardBefore(heard(dave), 425, 1000), "dave heard the user's second phone, then carol");
  const updates = (await eventsOf(client)).filter((event) => event.event === 'call_update') as unknown as {
    call: { uuid: string; state: string };
  }[];
  const states = (uuid: string) =>
    updates.filter((event) => event.call.uuid === uuid).map((event) => event.call.state);
  assert.deepEqual(states(other.uuid), ['queued', 'ringing', 'in-progress', 'completed']);
  await until(async () => {
    const all = (await eventsOf(client)).filter((event) => event.event === 'call_update') as unknown as {
      call: { uuid: string; state: string };
    }[];
    return all.some((event) => event.call.uuid === first.uuid && event.call.state === 'completed');
  }, 'the first call completed');
});
