/**
 * What answers a number, beyond the basics: the voicemail notification
 * e-mail with the message attached, play_announcement_only, the dialplan ringtone mixed with
 * the ring tone, the legacy dialplan's pools, timeout and busy branches and redirects to
 * numbers outside, and call-reverse. Real baresips and the carrier stand-in (test/carrier.ts).
 *
 * Audio arrives in real time: a test waits until each side has heard what it needs (`hears`,
 * `carrier.hears`) before it acts. A fixed sleep is left only where time is the subject: a
 * message the caller speaks for a few seconds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  dial,
  hangUp,
  heard,
  heardSoFar,
  hears,
  nextEvent,
  numberOwner,
  phone,
  sipAccount,
  telephonyNode,
  tone,
  uploadAnnouncement,
  windowsOf,
} from '../../../test/calls.js';
import { startCarrier } from '../../../test/carrier.js';
import { sine } from '../../../test/content-inputs.js';
import { eventually, until } from '../../../test/helper.js';
import { startMailbox } from '../../../test/mailbox.js';
import { fcmStandIn } from '../../../test/push-services.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import { parseWav } from '../../platform/content/wav.js';
import { dominantFrequencies } from '../media/goertzel.js';

requireTelephonyPackages();

test('voicemail: the notification e-mail carries the message as WAV; play_announcement_only records nothing', async (t) => {
  const mailbox = await startMailbox(t);
  const node = await telephonyNode(t, { SMTP_URL: mailbox.url });
  const { app } = node;
  const { client, user } = await numberOwner(app, '+4930666001');
  const announcement = await uploadAnnouncement(app, client, sine(1400, 8000, 1, 0.3));
  const dialplan = await client.call('POST', '/api/dialplan/v2', {
    dialplan: { profiles: [{ record: { announcement } }] },
  });
  const set = await client.call('POST', '/api/phone', {
    phone: {
      '+4930666001': {
        dialplan: dialplan.uuid,
        notification_email: 'box@example.com',
        notification_attachment: true,
      },
    },
  });
  assert.equal(set.status, 'ok', JSON.stringify(set));
  const a = await phone(t, node, await sipAccount(app, 'alice_01'), {
    answerMode: 'manual',
    microphone: tone(1000),
  });
  await dial(a, '+4930666001');
  await hears(a, 1400, 20); // the announcement first
  await sleep(3000); // then about three seconds of message: the caller speaks in real time
  await hangUp(a);
  const event = await nextEvent(client, 'recording_new');
  await until(() => mailbox.to('box@example.com').length > 0, 'the notification mail', 20_000);
  const mail = mailbox.last('box@example.com');
  assert.match(mail.subject, /alice_01/);
  assert.match(mail.text, /\+4930666001/);
  assert.match(mail.text, new RegExp(event.recording as string));
  const [attachment] = mail.parsed.attachments;
  assert.ok(attachment, 'the message is attached');
  assert.equal(attachment.contentType, 'audio/wav');
  const audio = parseWav(new Uint8Array(attachment.content));
  const windows = dominantFrequencies(audio.samples, audio.sampleRate, [1000, 1400], 30).filter(
    (w) => w.rms > 0.05 && w.share > 0.7,
  );
  assert.ok(windows.filter((w) => w.frequency === 1000).length >= 40, 'the attachment holds what alice said');

  // play_announcement_only: the announcement, then Zentrale hangs up; no recording, no mail.
  await app.services.phones.setSwitches('+4930666001', { play_announcement_only: true });
  const recordings = () =>
    app.database.db
      .selectFrom('object')
      .select('uuid')
      .where('owner', '=', user.uuid)
      .where('type', '=', 'recording')
      .execute();
  const before = (await recordings()).length;
  const closed = a.waitFor('CALL_CLOSED', 30_000);
  await dial(a, '+4930666001');
  await closed;
  // The second call's CDR marks its end: written after a recording would have been stored.
  const cdrs = await eventually(
    () => app.services.cdrs.listCdrs({ owner: user.uuid }),
    (rows) => rows.length >= 2,
    "both calls' CDRs",
  );
  assert.deepEqual(
    cdrs.map((cdr) => cdr.recording_id !== undefined).sort(),
    [false, true],
    `the first call recorded a message, the second none: ${JSON.stringify(cdrs)}`,
  );
  assert.equal(mailbox.to('box@example.com').length, 1, 'no second mail');
  assert.equal((await recordings()).length, before, 'no recording');
  // The second call's own dump: the announcement, then Zentrale hung up.
  const atA = heard(a, 'last');
  assert.ok(windowsOf(atA, 1400) >= 20, `the announcement played: ${windowsOf(atA, 1400)} windows`);
});

test('the dialplan ringtone: while the target rings the caller hears the announcement mixed with the ring tone, then the target', async (t) => {
  const node = await telephonyNode(t);
  const { app } = node;
  const { client, user } = await numberOwner(app, '+4930666002');
  const bob = await sipAccount(app, 'bob_01', user.uuid);
  const announcement = await uploadAnnouncement(app, client, sine(1400, 8000, 2, 0.3));
  const dialplan = await client.call('POST', '/api/dialplan/v2', {
    dialplan: {
      ringtone: { announcement, mix: true },
      profiles: [{ parallel: { targets: ['bob_01'], timeout: 30 } }],
    },
  });
  assert.equal(dialplan.status, 'ok', JSON.stringify(dialplan));
  await client.call('POST', '/api/phone', { phone: { '+4930666002': { dialplan: dialplan.uuid } } });
  const b = await phone(t, node, bob, { answerMode: 'manual', microphone: tone(1000) });
  const a = await phone(t, node, await sipAccount(app, 'alice_01'), { answerMode: 'manual' });
  const ringing = b.waitFor('CALL_INCOMING', 20_000);
  await dial(a, '+4930666002');
  await ringing;
  // While bob rings, the caller hears the announcement and the 425 Hz ring tone under it.
  await until(
    () => {
      const so = heardSoFar(a);
      return windowsOf(so, 1400) >= 40 && so.filter((w) => w.frequency === 425 && w.share > 0.3).length >= 10;
    },
    'the announcement with the ring tone mixed under it',
    30_000,
    100,
  );
  assert.equal(b.events.filter((event) => event.type === 'CALL_ESTABLISHED').length, 0, 'bob still rings');
  const answered = b.waitFor('CALL_ESTABLISHED', 20_000);
  b.command('accept');
  await answered;
  await hears(a, 1000, 30);
  await hangUp(a, b);
  const windows = heard(a);
  assert.ok(windowsOf(windows, 1400) >= 40, `the announcement: ${windowsOf(windows, 1400)} windows`);
  // Mixed: windows where the 425 Hz ring tone is as strong as the announcement.
  const mixed = windows.filter((w) => w.frequency === 425 && w.share > 0.3).length;
  assert.ok(mixed >= 10, `the ring tone under it: ${mixed} windows`);
  assert.ok(windowsOf(windows, 1000) >= 30, `bob after he answered: ${windowsOf(windows, 1000)} windows`);
});

test('legacy dialplan: sip with the pools rings them all (inactive pool numbers not), timeout redirects to a number outside, busy takes its own branch', async (t) => {
  const carrier = await startCarrier(t);
  const node = await telephonyNode(t, { CARRIER_URI: carrier.uri });
  const { app } = node;
  const { client, user } = await numberOwner(app, '+4930666003');
  const bob = await sipAccount(app, 'bob_01', user.uuid);
  const carol = await sipAccount(app, 'carol_01', user.uuid);
  carrier.answer('+4940300', { ring: true });
  carrier.answer('+4940400', { tone: 1000 });
  carrier.answer('+4940500', { tone: 600 });
  const legacy = await client.call('POST', '/api/dialplan', {
    action: 'sip',
    sip: 'bob_01',
    phone: '+4940400',
    sip_pool: { add: ['carol_01'] },
    phone_pool: { add: { '+4940300': true, '+4940301': false } },
    timeout: { timeout: 5, action: 'redirect' },
  });
  assert.equal(legacy.status, 'ok', JSON.stringify(legacy));
  const b = await phone(t, node, bob, { answerMode: 'manual' });
  const c = await phone(t, node, carol, { answerMode: 'manual', microphone: tone(1400) });
  const a = await phone(t, node, await sipAccount(app, 'alice_01'), { answerMode: 'manual' });

  // All ring; carol answers and is connected.
  let ringing = [
    b.waitFor('CALL_INCOMING', 20_000),
    c.waitFor('CALL_INCOMING', 20_000),
    carrier.callTo('+4940300'),
  ];
  const bobStops = b.waitFor('CALL_CLOSED', 20_000);
  a.command('dial', '+4930666003');
  await Promise.all(ringing);
  const established = a.waitFor('CALL_ESTABLISHED', 20_000);
  c.command('accept');
  await established;
  await bobStops;
  await hears(a, 1400, 30);
  await hangUp(a, c);
  assert.ok(windowsOf(heard(a), 1400) >= 30, 'carol from the sip_pool was connected');
  assert.equal(carrier.calls.filter((call) => call.number === '+4940301').length, 0, 'inactive pool entry');

  // Nobody answers within 5 s: the timeout action redirects to phone (outside, via the carrier).
  ringing = [b.waitFor('CALL_INCOMING', 20_000), c.waitFor('CALL_INCOMING', 20_000)];
  await dial(a, '+4930666003').then(
    () => undefined,
    () => undefined,
  );
  await Promise.all(ringing);
  await carrier.callTo('+4940400', 30_000);
  await hears(a, 1000, 30);
  await hangUp(a);
  const windows = heard(a, 'last');
  assert.ok(windowsOf(windows, 1000) >= 30, `redirected to +4940400: ${windowsOf(windows, 1000)} windows`);
  // The timeout branch, not an answer: bob never answered, carol only the first call.
  assert.equal(b.events.filter((event) => event.type === 'CALL_ESTABLISHED').length, 0);
  assert.equal(c.events.filter((event) => event.type === 'CALL_ESTABLISHED').length, 1);

  // Only bob rings now; he refuses (486): the busy branch redirects to its own phone.
  const change = await client.call('POST', '/api/dialplan', {
    sip_pool: { delete: ['carol_01'] },
    phone_pool: { delete: ['+4940300', '+4940301'] },
    busy: { action: 'redirect', phone: '+4940500' },
  });
  assert.equal(change.status, 'ok', JSON.stringify(change));
  const incoming = b.waitFor('CALL_INCOMING', 20_000);
  const connected = a.waitFor('CALL_ESTABLISHED', 30_000);
  a.command('dial', '+4930666003');
  await incoming;
  b.command('hangup');
  await connected;
  await carrier.callTo('+4940500');
  await hears(a, 600, 30);
  await hangUp(a);
  assert.ok(windowsOf(heard(a, 'last'), 600) >= 30, 'the busy branch redirected to +4940500');
});

test("call-reverse: a call to the number signals dialplan_callreverse_start (event and push), the filter number's call is joined to the waiting caller, then _stop", async (t) => {
  const carrier = await startCarrier(t);
  const push = await fcmStandIn(t);
  const node = await telephonyNode(t, { CARRIER_URI: carrier.uri, ...push.services.env });
  const { app } = node;
  await app.services.pushFcmCredentials.setCredential(push.serviceAccount);
  const { client, user } = await numberOwner(app, '+4930666004');
  assert.equal(
    (await client.call('POST', '/api/push', { action: 'add', system: 'fcm', device_token: 'reverse-phone' }))
      .status,
    'ok',
  );
  await sipAccount(app, 'bob_01', user.uuid); // not registered: rings nowhere
  const legacy = await client.call('POST', '/api/dialplan', {
    action: 'sip',
    sip: 'bob_01',
    callreverse_enable: true,
    timeout: { timeout: 60, action: 'reject' },
  });
  assert.equal(legacy.status, 'ok', JSON.stringify(legacy));
  const kamailio = `127.0.0.1:${node.sipPort}`;
  const started = nextEvent(client, 'dialplan_callreverse_start');
  const caller = await carrier.dial(kamailio, '+4917000111', '+4930666004', 600);
  assert.equal(caller.status, 200);
  const start = await started;
  assert.deepEqual(
    [start.owner, start.phone_from, start.phone_to],
    [user.uuid, '+4917000111', '+4930666004'],
  );
  assert.equal(
    (await client.call('POST', '/api/dialplan/callreverse', { filter: '+4916000222' })).status,
    'ok',
  );
  const reverse = await carrier.dial(kamailio, '+4916000222', '+4930666004', 1000);
  assert.equal(reverse.status, 200);
  await Promise.all([carrier.hears(caller, 1000, 30), carrier.hears(reverse, 600, 30)]);
  const stopped = nextEvent(client, 'dialplan_callreverse_stop');
  await caller.leg.hangup();
  await stopped;
  assert.ok(
    ((await carrier.heard(caller.recorder!, [600, 1000])).get(1000) ?? 0) >= 30,
    'the caller hears the reverse call',
  );
  assert.ok(((await carrier.heard(reverse.recorder!, [600, 1000])).get(600) ?? 0) >= 30, 'and the other way');
  assert.equal(
    (await client.call('POST', '/api/dialplan/callreverse', { filter: '+4916000222' })).status,
    'no-callreverse',
  );
  const cdrs = await eventually(
    () => app.services.cdrs.listCdrs({ owner: user.uuid }),
    (rows) => rows.length >= 2,
    'the CDRs of the caller and of the joined reverse call',
  );
  const first = cdrs.find((cdr) => cdr.service === 'call');
  const joined = cdrs.find((cdr) => cdr.service === 'call_reverse');
  assert.equal(first?.a_number, '+4917000111', JSON.stringify(cdrs));
  assert.equal(joined?.a_number, '+4916000222');
  assert.equal(joined?.parent, first?.id);

  // The owner's device got both as push messages (FCM data), start before stop.
  const pushed = (await push.services.waitFor('fcm', 2)).map((request) => {
    const { message } = JSON.parse(request.body) as { message: { token: string; data: unknown } };
    return { token: message.token, data: message.data };
  });
  const call = { owner: user.uuid, phone_from: '+4917000111', phone_to: '+4930666004' };
  assert.deepEqual(pushed, [
    { token: 'reverse-phone', data: { message: 'dialplan_callreverse_start', ...call } },
    { token: 'reverse-phone', data: { message: 'dialplan_callreverse_stop', ...call } },
  ]);
});
