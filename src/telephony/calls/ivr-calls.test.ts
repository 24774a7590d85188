/**
 * IVRs, legacy dialplans and dialplan pins on real calls: baresips register through the
 * Kamailio Zentrale starts, press keys as RFC 4733 events (ctrl_tcp `sndcode`), and what they
 * hear is checked with a Goertzel filter.
 *
 * Fixed sleeps here are real waits on purpose: they let real audio play, and real peers send RTP
 * in real time, so it is heard (and recorded) only for as long as the call lasts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  dial,
  enabledNumber,
  hangUp,
  heard,
  nextEvent,
  numberOwner,
  numberWithDialplan,
  phone,
  sipAccount,
  telephonyNode,
  tone,
  uploadAnnouncement,
  windowsOf,
} from '../../../test/calls.js';
import { sine } from '../../../test/content-inputs.js';
import type { Baresip } from '../../../test/sip-peers.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

/** Presses keys on the phone's call (RFC 4733 events), one after another. */
async function press(peer: Baresip, digits: string): Promise<void> {
  for (const digit of digits) {
    peer.command('sndcode', digit);
    await sleep(300);
  }
}

test('an IVR answers: its announcement, key 1 redirects to a number that rings a SIP account (bridged), key 2 runs a nested IVR', async (t) => {
  const node = await telephonyNode(t);
  const { app } = node;
  const accounts: Awaited<ReturnType<typeof sipAccount>>[] = [];
  // +4930555102 rings bob_01 (a v2 dialplan); +4930555101 is answered by the IVR.
  const { client, user } = await numberWithDialplan(
    app,
    '+4930555102',
    () => [{ parallel: { targets: ['bob_01'], timeout: 30 } }],
    sine(425, 8000, 1, 0.3),
    async (owner) => {
      accounts.push(await sipAccount(app, 'bob_01', owner));
    },
  );
  await enabledNumber(app, user.uuid, '+4930555101');
  const main = await uploadAnnouncement(app, client, sine(1400, 8000, 6, 0.3));
  const nestedAnnouncement = await uploadAnnouncement(app, client, sine(600, 8000, 2, 0.3));
  const nested = await client.call('POST', '/api/ivr', {
    description: 'nested',
    announcement: nestedAnnouncement,
    '9': '+4930555102',
  });
  assert.equal(nested.status, 'ok', JSON.stringify(nested));
  const ivr = await client.call('POST', '/api/ivr', {
    description: 'main',
    announcement: main,
    '1': '+4930555102',
    '2': nested.uuid,
  });
  assert.equal(ivr.status, 'ok', JSON.stringify(ivr));
  const set = await client.call('POST', '/api/phone', { phone: { '+4930555101': { ivr: ivr.uuid } } });
  assert.equal(set.status, 'ok', JSON.stringify(set));

  const b = await phone(t, node, accounts[0]!, { answerMode: 'auto', microphone: tone(1000) });
  const a = await phone(t, node, await sipAccount(app, 'alice_01'), { answerMode: 'manual' });
  // Key 1: the announcement (1400 Hz) is cut short, bob rings and is connected.
  await dial(a, '+4930555101');
  await sleep(2000);
  const bobAnswers = b.waitFor('CALL_ESTABLISHED', 20_000);
  await press(a, '1');
  await bobAnswers;
  await sleep(2500);
  await hangUp(a, b);
  let windows = heard(a);
  assert.ok(
    windowsOf(windows, 1400) >= 30,
    `the IVR announcement: 1400 Hz in ${windowsOf(windows, 1400)} windows`,
  );
  assert.ok(windowsOf(windows, 1000) >= 30, `bob's 1000 Hz in ${windowsOf(windows, 1000)} windows`);

  // Key 2: the nested IVR's announcement (600 Hz) plays.
  const c = await phone(t, node, await sipAccount(app, 'carol_01'), { answerMode: 'manual' });
  await dial(c, '+4930555101');
  await sleep(1500);
  await press(c, '2');
  await sleep(2500);
  await hangUp(c);
  windows = heard(c);
  assert.ok(windowsOf(windows, 1400) >= 20, `the main announcement: ${windowsOf(windows, 1400)} windows`);
  assert.ok(windowsOf(windows, 600) >= 30, `the nested announcement: ${windowsOf(windows, 600)} windows`);
  assert.equal(windowsOf(windows, 1000), 0, 'not connected to bob');
});

test('a legacy dialplan: sip rings the account (bridged); with the account unregistered, the unavailable action records a voicemail', async (t) => {
  const node = await telephonyNode(t);
  const { app } = node;
  const { client, user } = await numberOwner(app, '+4930555201');
  const bob = await sipAccount(app, 'bob_01', user.uuid);
  await sipAccount(app, 'carol_01', user.uuid);
  const announcement = await uploadAnnouncement(app, client, sine(1400, 8000, 1, 0.3));
  const legacy = await client.call('POST', '/api/dialplan', {
    announcement,
    action: 'sip',
    sip: 'bob_01',
    unavailable: { action: 'record' },
  });
  assert.equal(legacy.status, 'ok', JSON.stringify(legacy));
  const b = await phone(t, node, bob, { answerMode: 'auto', microphone: tone(1000) });
  const a = await phone(t, node, await sipAccount(app, 'alice_01'), {
    answerMode: 'manual',
    microphone: tone(600),
  });
  await dial(a, '+4930555201');
  await sleep(2000);
  await hangUp(a, b);
  const windows = heard(a);
  assert.ok(windowsOf(windows, 1000) >= 30, `bob's 1000 Hz in ${windowsOf(windows, 1000)} windows`);

  // carol_01 has no phone registered: 480, so the unavailable path (record) answers.
  assert.equal((await client.call('POST', '/api/dialplan', { sip: 'carol_01' })).status, 'ok');
  const c = await phone(t, node, await sipAccount(app, 'dave_01'), {
    answerMode: 'manual',
    microphone: tone(600),
  });
  await dial(c, '+4930555201');
  await sleep(3500);
  await hangUp(c);
  const event = await nextEvent(client, 'recording_new');
  assert.equal(event.phone, 'dave_01');
  await app.services.content.idle();
  const recording = await app.services.recordings.getRecording(user.uuid, event.recording as string);
  assert.deepEqual([recording.status, recording.to], ['ok', '+4930555201']);
  const atC = heard(c);
  assert.ok(windowsOf(atC, 1400) >= 20, `the mailbox announcement: ${windowsOf(atC, 1400)} windows`);
});

test('a dialplan pin: onStart plays, the right digits run onSuccess (ringing a SIP account, bridged)', async (t) => {
  const node = await telephonyNode(t);
  const accounts: Awaited<ReturnType<typeof sipAccount>>[] = [];
  await numberWithDialplan(
    node.app,
    '+4930555301',
    (announcement) => [
      {
        pin: {
          code: '1234',
          timeout: 20,
          onStart: [{ play: { announcement } }],
          onSuccess: [{ parallel: { targets: ['bob_01'], timeout: 30 } }],
          onFail: [{ reject: {} }],
        },
      },
    ],
    sine(1400, 8000, 2, 0.3),
    async (owner) => {
      accounts.push(await sipAccount(node.app, 'bob_01', owner));
    },
  );
  const b = await phone(t, node, accounts[0]!, { answerMode: 'auto', microphone: tone(1000) });
  const a = await phone(t, node, await sipAccount(node.app, 'alice_01'), { answerMode: 'manual' });
  await dial(a, '+4930555301');
  await sleep(2500);
  const bobAnswers = b.waitFor('CALL_ESTABLISHED', 20_000);
  await press(a, '1234');
  await bobAnswers;
  await sleep(2000);
  await hangUp(a, b);
  const windows = heard(a);
  assert.ok(windowsOf(windows, 1400) >= 40, `the onStart announcement: ${windowsOf(windows, 1400)} windows`);
  assert.ok(windowsOf(windows, 1000) >= 30, `bob's 1000 Hz in ${windowsOf(windows, 1000)} windows`);
});

test("an IVR's timeout: without a key, timeout.announcement plays and Zentrale hangs up", async (t) => {
  const node = await telephonyNode(t);
  const { app } = node;
  const { client } = await numberOwner(app, '+4930555401');
  const main = await uploadAnnouncement(app, client, sine(1400, 8000, 1, 0.3));
  const bye = await uploadAnnouncement(app, client, sine(600, 8000, 2, 0.3));
  const ivr = await client.call('POST', '/api/ivr', {
    description: 'menu',
    announcement: main,
    '1': '+4930555999',
    timeout: { seconds: 1, action: 'play', announcement: bye },
  });
  assert.equal(ivr.status, 'ok', JSON.stringify(ivr));
  assert.equal(
    (await client.call('POST', '/api/phone', { phone: { '+4930555401': { ivr: ivr.uuid } } })).status,
    'ok',
  );
  const a = await phone(t, node, await sipAccount(app, 'alice_01'), { answerMode: 'manual' });
  const closed = a.waitFor('CALL_CLOSED', 30_000);
  await dial(a, '+4930555401');
  await closed;
  const windows = heard(a);
  assert.ok(windowsOf(windows, 1400) >= 20, `the menu: ${windowsOf(windows, 1400)} windows`);
  assert.ok(windowsOf(windows, 600) >= 40, `the timeout announcement: ${windowsOf(windows, 600)} windows`);
});

test('a dialplan pin: a wrong code runs onFail (its announcement, then reject: Zentrale hangs up), never onSuccess', async (t) => {
  const node = await telephonyNode(t);
  const { app } = node;
  const { client } = await numberOwner(app, '+4930555302');
  // One tone per branch, so that what the caller heard tells which branch ran.
  const start = await uploadAnnouncement(app, client, sine(1400, 8000, 1, 0.3));
  const success = await uploadAnnouncement(app, client, sine(1000, 8000, 2, 0.3));
  const fail = await uploadAnnouncement(app, client, sine(600, 8000, 2, 0.3));
  const dialplan = await client.call('POST', '/api/dialplan/v2', {
    dialplan: {
      profiles: [
        {
          pin: {
            code: '42',
            onStart: [{ play: { announcement: start } }],
            onSuccess: [{ play: { announcement: success } }],
            onFail: [{ play: { announcement: fail } }, { reject: {} }],
          },
        },
      ],
    },
  });
  assert.equal(dialplan.status, 'ok', JSON.stringify(dialplan));
  const set = await client.call('POST', '/api/phone', {
    phone: { '+4930555302': { dialplan: dialplan.uuid } },
  });
  assert.equal(set.status, 'ok');
  const a = await phone(t, node, await sipAccount(app, 'alice_01'), { answerMode: 'manual' });
  await dial(a, '+4930555302');
  const closed = a.waitFor('CALL_CLOSED', 20_000);
  await sleep(1500); // the caller listens to the prompt: a key would cut it short
  await press(a, '41');
  await closed;
  const windows = heard(a);
  assert.ok(windowsOf(windows, 1400) >= 20, `the onStart announcement: ${windowsOf(windows, 1400)} windows`);
  assert.ok(windowsOf(windows, 600) >= 40, `the onFail announcement: ${windowsOf(windows, 600)} windows`);
  assert.equal(windowsOf(windows, 1000), 0, 'onSuccess never ran');
});
