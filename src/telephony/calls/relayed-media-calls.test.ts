/**
 * The call API's media commands on a call whose media rtpengine relays (docs/decisions.md "Call
 * control: media commands"): alice's baresip (600 Hz, the user's account) calls bob's (1000 Hz).
 * A play (tone, text) reaches alice's phone instead of bob and bob is heard again when it ends or
 * stops; mute silences each direction; collect hears alice's keys (rtpengine's DTMF log, each also
 * call_dtmf); record holds alice's tone (rtpengine sends Zentrale a copy of her stream).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  eventsOf,
  heardSoFar,
  hears,
  mutesEachWay,
  recordedTones,
  telephonyNode,
  tonePhone,
  windowsOf,
} from '../../../test/calls.js';
import { loggedInClient, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

test('play, stop, mute and collect on a call rtpengine relays, heard on the phones', async (t) => {
  const node = await telephonyNode(t);
  const { client, user } = await loggedInClient(node.app);
  const a = await tonePhone(t, node, 'alice_01', 600, user.uuid);
  const b = await tonePhone(t, node, 'bob_01', 1000);
  assert.equal((await client.call('GET', '/api/call/event')).status, 'ok');
  const incoming = b.waitFor('CALL_INCOMING', 20_000);
  a.command('dial', 'bob_01');
  await incoming;
  const [listed] = (await client.call('GET', '/api/call')).call as { uuid: string }[];
  const uuid = listed!.uuid;
  const steer = (body: Record<string, unknown>) => client.call('POST', `/api/call/${uuid}/control`, body);
  // Ringing: nothing to play to yet.
  assert.equal((await steer({ command: 'play', tone: { frequency: 1400 } })).status, 'illegal-state');
  const established = a.waitFor('CALL_ESTABLISHED', 20_000);
  b.command('accept');
  await established;
  await Promise.all([hears(a, 1000, 20), hears(b, 600, 20)]);
  // rtpengine relays this call: Zentrale has no media leg of it.
  assert.equal(node.app.services.telephony.calls!.calls.get(uuid)!.leg, undefined);

  // play until stopped: alice hears 1400 Hz instead of bob; stop brings bob back.
  assert.deepEqual(await steer({ command: 'play', tone: { frequency: 1400 } }), { status: 'ok' });
  await hears(a, 1400, 40);
  const bobDuring = windowsOf(heardSoFar(a), 1000);
  await hears(a, 1400, windowsOf(heardSoFar(a), 1400) + 20);
  assert.ok(windowsOf(heardSoFar(a), 1000) <= bobDuring + 3, 'bob is not heard while it plays');
  assert.deepEqual(await steer({ command: 'stop' }), { status: 'ok' });
  const played = windowsOf(heardSoFar(a), 1400);
  await hears(a, 1000, windowsOf(heardSoFar(a), 1000) + 30);
  assert.ok(windowsOf(heardSoFar(a), 1400) <= played + 5, 'the play ended with stop');
  // bob heard alice all along: a play goes to the caller only.
  await hears(b, 600, windowsOf(heardSoFar(b), 600) + 10);
  assert.equal(windowsOf(heardSoFar(b), 1400), 0, 'bob heard nothing of the play');

  // A play of a length ends by itself, and bob is heard again after it.
  const before = windowsOf(heardSoFar(a), 1400);
  assert.deepEqual(await steer({ command: 'play', tone: { frequency: 1400, duration: 1500 } }), {
    status: 'ok',
  });
  await hears(a, 1400, before + 30);
  const bobBack = windowsOf(heardSoFar(a), 1000);
  await hears(a, 1000, bobBack + 30);
  const once = windowsOf(heardSoFar(a), 1400) - before;
  assert.ok(once <= 1500 / 30 + 5, `the tone played once: ${once} windows`);

  // Text: alice hears speech instead of bob for a while, then bob again (the file path of any PCM).
  const speech = () => heardSoFar(a).filter((w) => !(w.frequency === 1000 && w.share > 0.7)).length;
  const quiet = speech();
  assert.deepEqual(await steer({ command: 'play', text: 'Guten Tag, hier spricht Zentrale.' }), {
    status: 'ok',
  });
  await until(() => speech() >= quiet + 20, 'the speech heard', 20_000, 100);
  await hears(a, 1000, windowsOf(heardSoFar(a), 1000) + 30);

  await mutesEachWay(steer, a, b);

  // collect: alice's keys reach Zentrale through rtpengine's DTMF log: call_dtmf each, then
  // call_collect at the terminator.
  assert.deepEqual(await steer({ command: 'collect', max_digits: 4, terminator: '#', timeout: 30 }), {
    status: 'ok',
  });
  const dtmf = async () => (await eventsOf(client)).filter((event) => event.event === 'call_dtmf');
  for (const [index, key] of ['4', '2', '#'].entries()) {
    a.command('sndcode', key);
    await until(async () => (await dtmf()).length > index, `call_dtmf of ${key}`, 20_000);
  }
  await until(
    async () => (await eventsOf(client)).some((event) => event.event === 'call_collect'),
    'call_collect',
    20_000,
  );
  assert.deepEqual(
    (await dtmf()).map((event) => [event.call, event.digit]),
    [
      [uuid, '4'],
      [uuid, '2'],
      [uuid, '#'],
    ],
  );
  assert.deepEqual(
    (await eventsOf(client))
      .filter((event) => event.event === 'call_collect')
      .map(({ call, digits, reason }) => ({ call, digits, reason })),
    [{ call: uuid, digits: '42', reason: 'terminator' }],
  );
  // record: rtpengine sends Zentrale a copy of alice's stream; the recording holds her tone only.
  assert.deepEqual(await steer({ command: 'record-start' }), { status: 'ok' });
  assert.equal((await steer({ command: 'record-start' })).status, 'illegal-state', 'one recording at a time');
  await hears(b, 600, windowsOf(heardSoFar(b), 600) + 60);
  assert.deepEqual(await steer({ command: 'record-stop' }), { status: 'ok' });
  const recorded = await recordedTones(node, client, user.uuid, [600, 1000]);
  assert.ok(
    windowsOf(recorded, 600) >= 30,
    `the recording holds alice's tone: ${windowsOf(recorded, 600)} windows`,
  );
  assert.equal(windowsOf(recorded, 1000), 0, "bob's side is not in it");
  // The call goes on as it was: bob still hears alice.
  await hears(b, 600, windowsOf(heardSoFar(b), 600) + 10);

  const closed = [a.waitFor('CALL_CLOSED', 20_000), b.waitFor('CALL_CLOSED', 20_000)];
  assert.deepEqual(await steer({ command: 'hangup' }), { status: 'ok' });
  await Promise.all(closed);
  // The call ended: a command now is illegal-state.
  assert.equal((await steer({ command: 'stop' })).status, 'illegal-state');
});
