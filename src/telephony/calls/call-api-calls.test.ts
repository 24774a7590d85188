/**
 * The call API with real calls (docs/decisions.md "The call API"): baresips register through
 * the Kamailio Zentrale starts and call each other; the users' sessions list the live call and
 * hear its states as call_update while the phones hear each other.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  clickToDial,
  heard,
  hears,
  phone,
  sipAccount,
  telephonyNode,
  tone,
  windowsOf,
} from '../../../test/calls.js';
import { Client, loggedInClient, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

interface Update {
  id: number;
  event: string;
  call?: { uuid: string; state: string; from: string; to: string; direction: string };
}

/** Every event the client has from `next` on, without waiting. */
async function eventsOf(client: Client, next = 0): Promise<Update[]> {
  return (await client.call('GET', `/api/event?next=${next}&timeout=0`)).event as Update[];
}

test('a live call is listed for both users and its states reach the subscribed sessions as call_update', async (t) => {
  const node = await telephonyNode(t);
  const { client: aliceClient, user: aliceUser } = await loggedInClient(node.app);
  const { client: bobClient, user: bobUser } = await loggedInClient(node.app);
  const { client: stranger } = await loggedInClient(node.app);
  const alice = await sipAccount(node.app, 'alice_01', aliceUser.uuid);
  const bob = await sipAccount(node.app, 'bob_01', bobUser.uuid);
  // Bob's session subscribes; a second session of bob's does not.
  assert.equal((await bobClient.call('GET', '/api/call/event?timeout=600')).status, 'ok');
  const bobOther = new Client(node.app);
  await bobOther.login(bobUser.username, bobUser.password);
  const a = await phone(t, node, alice, { answerMode: 'manual', microphone: tone(600) });
  const b = await phone(t, node, bob, { answerMode: 'manual', microphone: tone(1000) });

  const incoming = b.waitFor('CALL_INCOMING', 20_000);
  a.command('dial', 'bob_01');
  await incoming;
  // While bob's phone rings, both users list the call; another user does not.
  const ringing = (await bobClient.call('GET', '/api/call')).call as Update['call'][];
  assert.equal(ringing.length, 1);
  const uuid = ringing[0]!.uuid;
  assert.deepEqual(
    {
      from: ringing[0]!.from,
      to: ringing[0]!.to,
      direction: ringing[0]!.direction,
      state: ringing[0]!.state,
    },
    { from: 'alice_01', to: 'bob_01', direction: 'out', state: 'ringing' },
  );
  assert.deepEqual(
    ((await aliceClient.call('GET', '/api/call')).call as Update['call'][]).map((call) => call!.uuid),
    [uuid],
  );
  assert.deepEqual((await stranger.call('GET', '/api/call')).call, []);

  const established = a.waitFor('CALL_ESTABLISHED', 20_000);
  b.command('accept');
  await established;
  await until(
    async () => (await eventsOf(bobClient)).some((event) => event.call?.state === 'in-progress'),
    'call_update in-progress',
  );
  const answered = (await bobClient.call('GET', '/api/call')).call as Update['call'][];
  assert.equal(answered[0]!.state, 'in-progress');
  // Audio flows before the hold (baresip 1.0 writes what it hears after a hold to a new dump:
  // what each side heard is checked in the first one, below): waited for until each hears the other.
  await Promise.all([hears(a, 1000, 20), hears(b, 600, 20)]);
  // rtpengine relays this call's media: hold re-INVITEs both phones inactive, resume sendrecv.
  const live = node.app.services.telephony.calls!.calls.get(uuid)!;
  const directions = () => live.dialogs.map((dialog) => dialog.remoteSdp?.audio?.direction ?? 'sendrecv');
  const steer = (command: string) => bobClient.call('POST', `/api/call/${uuid}/control`, { command });
  assert.deepEqual(await steer('hold'), { status: 'ok' });
  assert.deepEqual(directions(), ['inactive', 'inactive'], 'both phones took the hold');
  assert.deepEqual(await steer('resume'), { status: 'ok' });
  assert.deepEqual(directions(), ['sendrecv', 'sendrecv'], 'both phones took the resume');
  // DTMF on a call rtpengine relays goes to the caller's phone as SIP INFO.
  assert.equal((await steer('dtmf')).status, 'missing-element');
  const key = a.waitFor('CALL_DTMF_START', 20_000);
  const dtmf = await bobClient.call('POST', `/api/call/${uuid}/control`, { command: 'dtmf', digits: '1' });
  assert.deepEqual(dtmf, { status: 'ok' });
  assert.equal((await key).param, '1', "alice's phone got the key");
  const closed = [a.waitFor('CALL_CLOSED', 20_000), b.waitFor('CALL_CLOSED', 20_000)];
  a.command('hangup');
  await Promise.all(closed);
  await until(
    async () => ((await bobClient.call('GET', '/api/call')).call as unknown[]).length === 0,
    'the call left the list',
  );

  // The path: ringing, answered, completed, each once, for this call.
  const updates = (await eventsOf(bobClient)).filter((event) => event.event === 'call_update');
  assert.deepEqual(
    updates.map((event) => [event.call!.uuid, event.call!.state]),
    [
      [uuid, 'ringing'],
      [uuid, 'in-progress'],
      [uuid, 'completed'],
    ],
  );
  // Sessions that did not subscribe got none.
  for (const unsubscribed of [aliceClient, bobOther]) {
    assert.deepEqual(
      (await eventsOf(unsubscribed)).filter((event) => event.event.startsWith('call_')),
      [],
    );
  }
  // And the phones talked: each heard the other's tone.
  assert.ok(
    windowsOf(heard(a), 1000) >= 20,
    `alice heard bob in ${windowsOf(heard(a), 1000)} windows, ${windowsOf(heard(a), 600)} of her own`,
  );
  assert.ok(windowsOf(heard(b), 600) >= 20, `bob heard alice in ${windowsOf(heard(b), 600)} windows`);
});

test("click-to-dial rings the user's own phone first, then the destination, bridges them; the API hangs up", async (t) => {
  const node = await telephonyNode(t);
  const { client, own, far, dialled, call, connect } = await clickToDial(t, node);
  assert.equal(dialled.status, 'ok');
  assert.equal(call.state, 'queued', 'the call exists before its first INVITE leaves');
  // The destination is not called before the user's phone answered.
  assert.equal(
    far.events.some((event) => event.type === 'CALL_INCOMING'),
    false,
    'carol does not ring while the user is not there',
  );
  await connect();
  // Audio flows before the hold: waited for until each hears the other (checked again at the end).
  await Promise.all([hears(own, 1000, 20), hears(far, 600, 20)]);
  // Hold: the user's phone is re-INVITEd inactive and answers so; resume brings sendrecv back.
  const live = node.app.services.telephony.calls!.calls.get(call.uuid)!;
  const steer = (body: Record<string, unknown>) =>
    client.call('POST', `/api/call/${call.uuid}/control`, body);
  assert.deepEqual(await steer({ command: 'hold' }), { status: 'ok' });
  assert.equal(live.held, 'inactive');
  assert.equal(live.leg!.call.remoteSdp?.audio?.direction, 'inactive', 'the phone took the hold');
  assert.deepEqual(await steer({ command: 'resume' }), { status: 'ok' });
  assert.equal(live.held, undefined);
  assert.notEqual(live.leg!.call.remoteSdp?.audio?.direction, 'inactive', 'the phone took the resume');
  // The keys the user's phone presses reach the subscribed session as call_dtmf.
  own.command('sndcode', '7');
  await until(
    async () => (await eventsOf(client)).some((event) => event.event === 'call_dtmf'),
    'call_dtmf of the key pressed',
  );
  const dtmf = (await eventsOf(client)).filter((event) => event.event === 'call_dtmf') as unknown as {
    call: string;
    digit: string;
    duration: number;
  }[];
  assert.deepEqual(
    dtmf.map((event) => [event.call, event.digit]),
    [[call.uuid, '7']],
  );
  assert.equal((await steer({ command: 'dtmf' })).status, 'missing-element');
  assert.deepEqual(await steer({ command: 'dtmf', digits: '12#' }), { status: 'ok' });

  // Another user cannot touch the call; the user hangs it up through the API.
  const { client: stranger } = await loggedInClient(node.app);
  const control = (who: Client) => who.call('POST', `/api/call/${call.uuid}/control`, { command: 'hangup' });
  assert.equal((await control(stranger)).status, 'access-denied');
  const closed = [own.waitFor('CALL_CLOSED', 20_000), far.waitFor('CALL_CLOSED', 20_000)];
  assert.deepEqual(await control(client), { status: 'ok' });
  await Promise.all(closed);
  await until(
    async () => ((await client.call('GET', '/api/call')).call as unknown[]).length === 0,
    'the call ended',
  );
  // A repeated hangup is answered the same way each time: the call has ended.
  assert.equal((await control(client)).status, 'illegal-state');
  assert.equal((await control(client)).status, 'illegal-state');
  assert.equal((await control(stranger)).status, 'access-denied');

  const updates = (await eventsOf(client)).filter((event) => event.event === 'call_update');
  assert.deepEqual(
    updates.map((event) => [event.call!.uuid, event.call!.state]),
    [
      [call.uuid, 'queued'],
      [call.uuid, 'ringing'],
      [call.uuid, 'in-progress'],
      [call.uuid, 'completed'],
    ],
  );
  assert.ok(windowsOf(heard(own), 1000) >= 20, 'the user heard carol');
  assert.ok(windowsOf(heard(far), 600) >= 20, 'carol heard the user');
});
