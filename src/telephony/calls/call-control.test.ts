/**
 * Steering a live Call against baresip, a real phone: hold re-INVITEs it and the audio stops
 * both ways, resume brings it back; a blind transfer REFERs it to a third phone, which it calls
 * and hears, and its NOTIFY sipfrag settles the transfer; commands that do not fit the call's
 * state are CallErrors.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { type Baresip, startBaresip } from '../../../test/sip-peers.js';
import { systemClock } from '../../platform/clock.js';
import { dominantFrequencies, type MediaEndpoint, MediaEngine, ToneSource } from '../media/index.js';
import { MediaLeg } from '../media-leg.js';
import { SipUserAgent } from '../sip/index.js';
import { Call } from './call.js';
import { CallError } from './errors.js';

/** 8 kHz samples of `frequency` for `seconds`, as a phone's microphone. */
function toneSamples(frequency: number, seconds = 20): Int16Array {
  const samples = new Int16Array(8000 * seconds);
  new ToneSource(frequency, { amplitude: 0.25 }).read(samples);
  return samples;
}

async function setup(t: TestContext) {
  const base = 36000 + Math.floor(Math.random() * 500) * 2;
  const engine = new MediaEngine({ portMin: base, portMax: base + 20 });
  t.after(() => engine.close());
  const ua = await SipUserAgent.start({ host: '127.0.0.1', port: 0 });
  t.after(() => ua.close());
  return { engine, ua };
}

/** Zentrale calls baresip and answers for the Call; Zentrale plays 1000 Hz to it throughout. */
async function callPhone(ua: SipUserAgent, engine: MediaEngine, phone: Baresip) {
  const leg = await MediaLeg.originate(ua, engine, { uri: `sip:baresip@127.0.0.1:${phone.sipPort}` });
  assert.equal((await leg.result).status, 200);
  await phone.waitFor('CALL_ESTABLISHED');
  const call = new Call(
    {
      direction: 'out',
      service: 'call',
      owner: 'alice',
      from: 'zentrale',
      status: 'ringing',
    },
    systemClock,
  );
  call.adopt(leg.call);
  call.answeredWith(leg);
  void leg.endpoint.play(new ToneSource(1000, { amplitude: 0.25 }));
  return { call, leg };
}

/** Windows of `frequency` the endpoint hears in a listening window of `ms`. */
async function hears(endpoint: MediaEndpoint, frequency: number, ms: number): Promise<number> {
  const recorder = endpoint.record(5);
  // A real wait: RTP plays in real time, so a window of listening is wall-clock time.
  await new Promise((resolve) => setTimeout(resolve, ms));
  const samples = recorder.stop().samples;
  return dominantFrequencies(samples, 8000, [600, 1000, 1200], 30).filter(
    (w) => w.rms > 3000 && w.frequency === frequency,
  ).length;
}

test('hold re-INVITEs the phone inactive and the audio stops both ways; resume brings it back', async (t) => {
  const { engine, ua } = await setup(t);
  const phone = await startBaresip(t, { answerMode: 'auto', microphone: toneSamples(600) });
  const { call, leg } = await callPhone(ua, engine, phone);
  assert.ok((await hears(leg.endpoint, 600, 800)) >= 10, 'the phone is heard before the hold');

  await call.hold();
  assert.equal(call.held, 'inactive');
  // The phone answered the hold's offer with inactive too.
  assert.equal(leg.call.remoteSdp?.audio?.direction, 'inactive');
  const sent = leg.endpoint.stats.sent;
  assert.equal(await hears(leg.endpoint, 600, 800), 0, 'nothing heard from the held phone');
  assert.equal(leg.endpoint.stats.sent, sent, 'nothing sent to the held phone');

  await call.resume();
  assert.equal(call.held, undefined);
  assert.ok((await hears(leg.endpoint, 600, 800)) >= 10, 'the phone is heard again');
  assert.ok(leg.endpoint.stats.sent > sent, 'the tone goes out again');
  // Waited for before the BYE leaves: the phone may report the close before hangup resolves.
  const closed = phone.waitFor('CALL_CLOSED');
  await leg.hangup();
  await closed;
  await assert.rejects(call.hold(), (error) => error instanceof CallError && error.code === 'illegal-state');
});

test('a blind transfer: the phone gets a REFER, calls the third phone and is heard there; its NOTIFY settles the transfer', async (t) => {
  const { engine, ua } = await setup(t);
  const phone = await startBaresip(t, { answerMode: 'auto', microphone: toneSamples(600) });
  const third = await SipUserAgent.start({ host: '127.0.0.1', port: 0 });
  t.after(() => third.close());
  const reached = new Promise<{ leg: MediaLeg<MediaEndpoint>; from: string }>((resolve) => {
    third.onInvite(async (incoming) => {
      const leg = await MediaLeg.accept(incoming, engine);
      assert.ok(leg);
      await leg.answer();
      resolve({ leg, from: incoming.from });
    });
  });
  const { call } = await callPhone(ua, engine, phone);
  const status = await call.transfer(`sip:third@127.0.0.1:${third.port}`);
  assert.equal(status, 200);
  const { leg: thirdLeg, from } = await reached;
  // The phone itself calls the third phone (Zentrale only asked it to).
  assert.match(from, /sip:baresip@127\.0\.0\.1/);
  assert.ok((await hears(thirdLeg.endpoint, 600, 800)) >= 10, 'the third phone hears the transferred phone');
  await thirdLeg.hangup();
});

test("a phone's REFER is answered 202 and NOTIFY sipfrag; told the new call answered, the phone hangs up", async (t) => {
  const { engine, ua } = await setup(t);
  const phone = await startBaresip(t, { answerMode: 'auto', microphone: toneSamples(600) });
  const { leg } = await callPhone(ua, engine, phone);
  const trace: string[] = [];
  const referred = new Promise<void>((resolve) => {
    leg.call.onRefer((referral) => {
      trace.push(`refer ${referral.target}`);
      resolve();
      // The call Zentrale would place for it answered: the final NOTIFY ends the subscription.
      void referral.notify(200, 'OK').then(() => trace.push('notified 200'));
    });
  });
  const ended = new Promise<void>((resolve) =>
    leg.call.onEnd((reason) => {
      trace.push(`end ${reason}`);
      resolve();
    }),
  );
  const closed = phone.waitFor('CALL_CLOSED');
  phone.command('transfer', 'sip:carol@127.0.0.1:5999');
  await referred;
  await Promise.all([ended, closed]);
  assert.deepEqual(trace, ['refer sip:carol@127.0.0.1:5999', 'notified 200', 'end bye']);
});
