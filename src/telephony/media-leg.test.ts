import assert from 'node:assert/strict';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { until } from '../../test/helper.js';
import { FIXTURES, freePort, runSipp } from '../../test/sip-peers.js';
import { type DtmfEvent, dominantFrequencies, type MediaEndpoint, MediaEngine } from './media/index.js';
import { MediaLeg } from './media-leg.js';
import { OutgoingCall, SipUserAgent } from './sip/index.js';

async function setup(t: TestContext) {
  const base = 35000 + Math.floor(Math.random() * 500) * 2;
  const engine = new MediaEngine({ portMin: base, portMax: base + 20 });
  t.after(() => engine.close());
  const callee = await SipUserAgent.start({ host: '127.0.0.1', port: 0 });
  const caller = await SipUserAgent.start({ host: '127.0.0.1', port: 0 });
  t.after(() => Promise.all([callee.close(), caller.close()]));
  return { engine, callee, caller };
}

test('media legs: early media, answer, tone, DTMF by RFC 4733 and SIP INFO through one event, hold, BYE', async (t) => {
  const { engine, callee, caller } = await setup(t);
  const answered = new Promise<MediaLeg<MediaEndpoint>>((resolve) => {
    callee.onInvite(async (call) => {
      const leg = await MediaLeg.accept(call, engine, { early: true });
      assert.ok(leg);
      await leg.answer();
      resolve(leg);
    });
  });
  const callerLeg = await MediaLeg.originate(caller, engine, { uri: `sip:ivr@127.0.0.1:${callee.port}` });
  assert.equal((await callerLeg.result).status, 200);
  const calleeLeg = await answered;
  const events: DtmfEvent[] = [];
  const three = new Promise<void>((resolve) =>
    calleeLeg.onDtmf((event) => {
      if (events.push(event) === 3) resolve();
    }),
  );

  const recorder = callerLeg.endpoint.record(5);
  await calleeLeg.endpoint.tone(1000, { durationMs: 300 });
  await callerLeg.endpoint.sendDtmf('12');
  // Give the RFC 4733 end packets time to land before the INFO overtakes them on another socket.
  await until(() => events.length >= 2, 'both digits heard', 30_000);
  await callerLeg.call.info('application/dtmf-relay', 'Signal=#\r\nDuration=100\r\n');
  await three;
  assert.deepEqual(
    events.map((event) => `${event.digit}/${event.source}`),
    ['1/rfc4733', '2/rfc4733', '#/info'],
  );
  const heard = recorder.stop();
  const loud = dominantFrequencies(heard.samples, 8000, [425, 1000], 30).filter((w) => w.rms > 5000);
  assert.ok(loud.length >= 6 && loud.every((w) => w.frequency === 1000));

  // Hold (RFC 3264 8.4): the caller offers sendonly; the callee answers recvonly and its
  // endpoint stops sending.
  assert.equal(await callerLeg.hold('sendonly'), 200);
  assert.equal(callerLeg.call.remoteSdp?.audio?.direction, 'recvonly');
  const sentBefore = calleeLeg.endpoint.stats.sent;
  await calleeLeg.endpoint.tone(1000, { durationMs: 100 });
  assert.equal(calleeLeg.endpoint.stats.sent, sentBefore);

  await callerLeg.hangup();
  assert.equal(calleeLeg.call.ended, 'bye');
  assert.ok(calleeLeg.endpoint.isClosed && callerLeg.endpoint.isClosed);
  assert.equal(engine.endpointCount, 0);
});

test('hangup while it rings: CANCEL from the caller, 480 from the callee; no common codec: 488', async (t) => {
  const { engine, callee, caller } = await setup(t);
  const calleeLegs: MediaLeg[] = [];
  callee.onInvite(async (call) => {
    const leg = await MediaLeg.accept(call, engine);
    if (leg) calleeLegs.push(leg);
    call.progress(180);
  });
  const ringing = await MediaLeg.originate(caller, engine, { uri: `sip:ring@127.0.0.1:${callee.port}` });
  await new Promise<void>(
    (resolve) => ringing.call instanceof OutgoingCall && ringing.call.onProgress(() => resolve()),
  );
  await ringing.hangup();
  assert.equal((await ringing.result).status, 487);
  assert.equal(calleeLegs[0]?.call.ended, 'cancel');

  const refused = await MediaLeg.originate(caller, engine, { uri: `sip:ring@127.0.0.1:${callee.port}` });
  await until(() => calleeLegs.length >= 2, 'the second INVITE arrived');
  await calleeLegs[1]!.hangup();
  assert.equal((await refused.result).status, 480);

  const g722 = caller.invite({
    uri: `sip:x@127.0.0.1:${callee.port}`,
    sdp: 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 9\r\n',
  });
  assert.equal((await g722.result).status, 488);
  assert.equal(engine.endpointCount, 0);
});

test('SIPp calls in and echoes our media (-rtp_echo): we hear back the 1000 Hz we play', async (t) => {
  const { engine, callee } = await setup(t);
  const heard = new Promise<Int16Array>((resolve, reject) => {
    callee.onInvite(async (call) => {
      try {
        const leg = await MediaLeg.accept(call, engine);
        assert.ok(leg);
        await leg.answer();
        const recorder = leg.endpoint.record(5);
        let echoed = 0;
        leg.endpoint.onAudio((samples) => {
          echoed += samples.length;
        });
        await leg.endpoint.tone(1000, { durationMs: 1000 });
        // Most of the second came back (a packet lost on the way may never come).
        await until(() => echoed >= 7200, 'the echo of the tone');
        resolve(recorder.stop().samples);
      } catch (error) {
        reject(error);
      }
    });
  });
  const run = runSipp(path.join(FIXTURES, 'uac-echo.xml'), `127.0.0.1:${callee.port}`, [
    '-m',
    '1',
    '-rtp_echo',
  ]);
  const samples = await heard;
  const result = await run;
  assert.equal(result.code, 0, result.output);
  const loud = dominantFrequencies(samples, 8000, [425, 1000, 2000], 30).filter((w) => w.rms > 5000);
  assert.ok(loud.length >= 25 && loud.every((w) => w.frequency === 1000), `${loud.length} loud windows`);
});

/** Plays 1000 Hz for `ms` and returns what came back once every packet sent was echoed (at most 2 s later). */
async function echoOf(leg: MediaLeg<MediaEndpoint>, ms: number): Promise<{ sent: number; loud: number }> {
  const { stats } = leg.endpoint;
  const [sentBefore, receivedBefore] = [stats.sent, stats.received];
  const recorder = leg.endpoint.record(5);
  await leg.endpoint.tone(1000, { durationMs: ms });
  const sent = stats.sent - sentBefore;
  // Up to 2 s for the frames to come back; a few lost on a loaded machine do not fail the test:
  // the frequency heard is its subject.
  await until(() => stats.received - receivedBefore >= sent, 'the sent frames came back', 2000).catch(
    () => {},
  );
  const samples = recorder.stop().samples;
  const loud = dominantFrequencies(samples, 8000, [425, 1000, 2000], 30).filter((w) => w.rms > 5000);
  assert.ok(loud.every((w) => w.frequency === 1000));
  return { sent, loud: loud.length };
}

test('Zentrale holds and resumes a SIPp callee that echoes our audio (the echo stops while held), refreshes, sends INFO DTMF and transfers it attended', async (t) => {
  const { engine, callee, caller } = await setup(t);
  const sippPort = await freePort();
  const sipp = runSipp(
    path.join(FIXTURES, 'uas-mid-dialog.xml'),
    `127.0.0.1:${caller.port}`,
    ['-m', '1', '-rtp_echo'],
    sippPort,
  );
  const leg = await MediaLeg.originate(caller, engine, { uri: `sip:sipp@127.0.0.1:${sippPort}` });
  assert.equal((await leg.result).status, 200);
  const before = await echoOf(leg, 600);
  assert.ok(before.loud >= 10, `${before.loud} loud windows before the hold`);

  // SIPp checks the re-INVITE says a=inactive and waits for our ACK before the next one.
  assert.equal(await leg.hold('inactive'), 200);
  assert.equal(leg.held, 'inactive');
  const held = await echoOf(leg, 600);
  assert.deepEqual(held, { sent: 0, loud: 0 });

  assert.equal(await leg.resume(), 200);
  assert.equal(leg.held, undefined);
  const after = await echoOf(leg, 600);
  assert.ok(after.loud >= 10, `${after.loud} loud windows after the resume`);

  assert.equal((await leg.call.refresh()).status, 200);
  assert.equal((await leg.call.sendDtmf('3')).status, 200);
  // The consultation call whose dialog SIPp's INVITE would replace at the transfer target.
  callee.onInvite(async (call) => {
    const consultLeg = await MediaLeg.accept(call, engine);
    await consultLeg?.answer();
  });
  const consult = await MediaLeg.originate(caller, engine, { uri: `sip:carol@127.0.0.1:${callee.port}` });
  assert.equal((await consult.result).status, 200);
  // SIPp reports 100 Trying, then 200 OK ending the subscription.
  assert.equal(await leg.call.refer(`sip:carol@127.0.0.1:${callee.port}`, { replacing: consult.call }), 200);
  await leg.hangup();
  const result = await sipp;
  assert.equal(result.code, 0, result.output);
  await consult.hangup();
  assert.equal(engine.endpointCount, 0);
});

test('a re-INVITE to T.38 (no audio stream) is refused with 488 and the call stays on audio', async (t) => {
  const { engine, callee, caller } = await setup(t);
  const answered = new Promise<MediaLeg<MediaEndpoint>>((resolve) => {
    callee.onInvite(async (call) => {
      const leg = await MediaLeg.accept(call, engine);
      await leg!.answer();
      resolve(leg!);
    });
  });
  const leg = await MediaLeg.originate(caller, engine, { uri: `sip:fax@127.0.0.1:${callee.port}` });
  assert.equal((await leg.result).status, 200);
  const calleeLeg = await answered;
  // What a fax gateway sends to move the call to T.38 (UDPTL), as fax machines' gateways do.
  const t38 = [
    'v=0',
    'o=- 1 2 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    'm=image 40000 udptl t38',
    'a=T38FaxVersion:0',
    'a=T38FaxUdpEC:t38UDPRedundancy',
    '',
  ].join('\r\n');
  assert.equal((await leg.call.reoffer(t38)).status, 488);
  // Still on audio: a tone played by the callee is heard by the caller.
  const recorder = leg.endpoint.record(5);
  await calleeLeg.endpoint.tone(1000, { durationMs: 600 });
  const loud = dominantFrequencies(recorder.stop().samples, 8000, [1000, 2000], 30).filter(
    (w) => w.rms > 5000,
  );
  assert.ok(loud.length >= 10 && loud.every((w) => w.frequency === 1000), `${loud.length} loud windows`);
});
