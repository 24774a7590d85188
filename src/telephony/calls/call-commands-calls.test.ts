/**
 * The call API's media commands with real phones (docs/decisions.md "Call control: media
 * commands"): a click-to-dial call, whose media Zentrale carries, between the user's baresip
 * (600 Hz) and a far baresip (1000 Hz). Play reaches the user's phone and stop gives it the far
 * phone back; mute silences each direction; collect turns the user's keys into call_collect;
 * a recording holds the user's tone and becomes a recording object (recording_new).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  clickToDial,
  eventsOf,
  heardSoFar,
  hears,
  mutesEachWay,
  recordedTones,
  telephonyNode,
  windowsOf,
} from '../../../test/calls.js';
import { type Client, loggedInClient, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

test('play, stop, mute, collect and record on a click-to-dial call, heard on the phones', async (t) => {
  const node = await telephonyNode(t);
  const { client, user, own, far, uuid, connect } = await clickToDial(t, node);
  const call = { uuid };
  const steer = (body: Record<string, unknown>, who: Client = client) =>
    who.call('POST', `/api/call/${uuid}/control`, body);
  // Ringing, nobody answered: Zentrale has no media of the call yet.
  assert.equal((await steer({ command: 'play', tone: { frequency: 1400 } })).status, 'illegal-state');
  await connect();
  await hears(own, 1000, 20);

  // Bad input: the schema's, another user's call, an announcement that is not the user's.
  // A play without what to play misses its element (the platform's word for a missing field).
  assert.equal((await steer({ command: 'play' })).status, 'missing-element');
  for (const body of [
    { command: 'play', tone: { frequency: 1400 }, announcement: call.uuid },
    { command: 'play', tone: { frequency: 10 } },
    { command: 'collect', max_digits: 0 },
    { command: 'mute', direction: 'sideways' },
    { command: 'record-start', max_seconds: 0 },
  ])
    assert.equal((await steer(body)).status, 'wrong-syntax', JSON.stringify(body));
  const { client: stranger } = await loggedInClient(node.app);
  assert.equal((await steer({ command: 'stop' }, stranger)).status, 'access-denied');
  assert.equal((await steer({ command: 'play', announcement: call.uuid })).status, 'wrong-announcement');
  assert.equal((await steer({ command: 'record-stop' })).status, 'illegal-state', 'nothing is recorded');

  // play: the user's phone hears 1400 Hz instead of carol; stop brings carol back.
  assert.deepEqual(await steer({ command: 'play', tone: { frequency: 1400 } }), { status: 'ok' });
  await hears(own, 1400, 20);
  assert.deepEqual(await steer({ command: 'stop' }), { status: 'ok' });
  const playedWindows = windowsOf(heardSoFar(own), 1400);
  const carolBefore = windowsOf(heardSoFar(own), 1000);
  await hears(own, 1000, carolBefore + 30);
  // A few windows may have been under way when stop arrived; the tone did not go on.
  assert.ok(windowsOf(heardSoFar(own), 1400) <= playedWindows + 5, 'the play ended with stop');

  await mutesEachWay(steer, own, far);

  // collect: two keys, then the terminator; each key is call_dtmf, the end one call_collect.
  assert.deepEqual(await steer({ command: 'collect', max_digits: 4, terminator: '#', timeout: 30 }), {
    status: 'ok',
  });
  for (const [index, key] of ['4', '2', '#'].entries()) {
    own.command('sndcode', key);
    await until(
      async () => (await eventsOf(client)).filter((event) => event.event === 'call_dtmf').length > index,
      `call_dtmf of ${key}`,
      20_000,
    );
  }
  await until(
    async () => (await eventsOf(client)).some((event) => event.event === 'call_collect'),
    'call_collect',
    20_000,
  );
  const events = await eventsOf(client);
  assert.deepEqual(
    events.filter((event) => event.event === 'call_dtmf').map((event) => event.digit),
    ['4', '2', '#'],
  );
  assert.deepEqual(
    events
      .filter((event) => event.event === 'call_collect')
      .map(({ call, digits, reason }) => ({ call, digits, reason })),
    [{ call: call.uuid, digits: '42', reason: 'terminator' }],
  );

  // record: what the user's phone sends (600 Hz) for a while, then record-stop.
  assert.deepEqual(await steer({ command: 'record-start' }), { status: 'ok' });
  assert.equal((await steer({ command: 'record-start' })).status, 'illegal-state', 'one recording at a time');
  await hears(own, 1000, windowsOf(heardSoFar(own), 1000) + 60);
  assert.deepEqual(await steer({ command: 'record-stop' }), { status: 'ok' });
  const windows = await recordedTones(node, client, user.uuid, [600, 1000]);
  assert.ok(
    windowsOf(windows, 600) >= 30,
    `the recording holds the user's tone: ${windowsOf(windows, 600)} windows`,
  );
  assert.equal(windowsOf(windows, 1000), 0, "carol's side is not in it");

  // The call lived through every command (no phone closed it); what closed it if one did.
  const closes = [...own.events, ...far.events].filter((event) => event.type === 'CALL_CLOSED');
  assert.deepEqual(closes, [], 'the call is still up');
  const closed = [own.waitFor('CALL_CLOSED', 20_000), far.waitFor('CALL_CLOSED', 20_000)];
  assert.deepEqual(await steer({ command: 'hangup' }), { status: 'ok' });
  await Promise.all(closed);
});
