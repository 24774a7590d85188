import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { startBaresip } from '../../../test/sip-peers.js';
import { parseWav } from '../../platform/content/wav.js';
import { acceptAnswer, LocalSdp } from '../sip/sdp.js';
import { SipUserAgent } from '../sip/user-agent.js';
import { dominantFrequencies } from './goertzel.js';
import { MediaEngine } from './media-engine.js';
import { ToneSource } from './sources.js';

async function setup(t: TestContext) {
  const ua = await SipUserAgent.start({ host: '127.0.0.1', port: 0 });
  t.after(() => ua.close());
  const base = 33000 + Math.floor(Math.random() * 500) * 2;
  const engine = new MediaEngine({ portMin: base, portMax: base + 20 });
  t.after(() => engine.close());
  return { ua, engine };
}

test('our UA calls baresip (auto answer), plays 1000 Hz; baresip hears 1000 Hz and sends DTMF back', async (t) => {
  const { ua, engine } = await setup(t);
  // baresip's microphone says 600 Hz, so each side can tell what it heard from what it sent.
  const microphone = new Int16Array(8000 * 20);
  new ToneSource(600, { amplitude: 0.25 }).read(microphone);
  const peer = await startBaresip(t, { answerMode: 'auto', microphone });
  const endpoint = await engine.createEndpoint();
  const local = { address: engine.address, port: endpoint.port };
  const call = ua.invite({ uri: `sip:baresip@127.0.0.1:${peer.sipPort}`, sdp: new LocalSdp().offer(local) });
  const result = await call.result;
  assert.equal(result.status, 200);
  const negotiated = call.remoteSdp && acceptAnswer(call.remoteSdp, local);
  assert.ok(negotiated);
  endpoint.setRemote({
    address: negotiated.remoteAddress,
    port: negotiated.remotePort,
    payloadType: negotiated.payloadType,
    telephoneEvent: negotiated.telephoneEvent,
  });
  const digits: string[] = [];
  const allDigits = new Promise<void>((resolve) =>
    endpoint.onDtmf((event) => {
      digits.push(event.digit);
      if (digits.length === 3) resolve();
    }),
  );
  const recorder = endpoint.record(10);
  await peer.waitFor('CALL_ESTABLISHED');
  assert.equal(await endpoint.tone(1000, { durationMs: 1500 }), 'done');
  peer.command('sndcode', '4');
  peer.command('sndcode', '2');
  peer.command('sndcode', '#');
  await allDigits;
  assert.deepEqual(digits, ['4', '2', '#']);
  const heard = recorder.stop();
  // Registered before the BYE: baresip's CALL_CLOSED can come while bye() still resolves.
  const closed = peer.waitFor('CALL_CLOSED');
  await call.bye();
  await closed;
  assert.equal(heard.empty, false);
  const fromPeer = dominantFrequencies(heard.samples, 8000, [600, 1000], 30).filter((w) => w.rms > 3000);
  assert.ok(
    fromPeer.length >= 30 && fromPeer.every((w) => w.frequency === 600),
    `${fromPeer.length} windows`,
  );

  const dump = fs.readdirSync(peer.dir).find((name) => name.endsWith('-dec.wav'));
  assert.ok(dump, `no decoded dump in ${fs.readdirSync(peer.dir).join(', ')}`);
  const audio = parseWav(fs.readFileSync(path.join(peer.dir, dump)));
  const windows = dominantFrequencies(audio.samples, audio.sampleRate, [425, 600, 1000, 1200], 30).filter(
    (w) => w.rms > 0.15,
  );
  assert.ok(windows.length >= 30, `only ${windows.length} loud windows`);
  const tone = windows.filter((w) => w.frequency === 1000 && w.share > 0.8);
  assert.ok(tone.length >= windows.length - 2, JSON.stringify(windows.slice(0, 5)));
});
