import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import { type TestContext, test } from 'node:test';
import { until } from '../../../test/helper.js';
import { DtmfReceiver, encodeEvent } from './dtmf.js';
import { decodeG711, encodeG711 } from './g711.js';
import { dominantFrequencies, goertzelPower } from './goertzel.js';
import { MediaEngine } from './media-engine.js';
import { DEFAULT_MEMBER } from './mixer.js';
import { delayQuantile } from './mixing-delay.js';
import { Recorder } from './recorder.js';
import { parseRtp, writeRtpHeader } from './rtp.js';
import { MixSource, PcmSource, ToneSource } from './sources.js';
import { WorkerMediaEngine, type WorkerPriority } from './worker-engine.js';
import { WorkerRoom } from './worker-room.js';

test('G.711 µ-law and A-law round trips stay within the quantisation step', () => {
  for (const type of [0, 8] as const) {
    const input = Int16Array.from({ length: 2000 }, (_, i) =>
      Math.round(Math.sin(i / 7) * 30000 * (i / 2000)),
    );
    const coded = new Uint8Array(input.length);
    const output = new Int16Array(input.length);
    encodeG711(input, type, coded);
    decodeG711(coded, type, output);
    for (let i = 0; i < input.length; i++) {
      assert.ok(
        Math.abs(input[i]! - output[i]!) <= Math.max(16, Math.abs(input[i]!) / 16),
        `${type} ${input[i]}`,
      );
    }
  }
  const out = new Uint8Array(1);
  encodeG711(Int16Array.of(0), 0, out);
  assert.equal(out[0], 0xff);
  encodeG711(Int16Array.of(0), 8, out);
  assert.equal(out[0], 0xd5);
});

test('RFC 4733 receiver reports each event once, also when its end was lost', () => {
  const digits: string[] = [];
  const receiver = new DtmfReceiver((digit) => digits.push(digit));
  for (const duration of [160, 320, 480]) receiver.receive(1, 1000, encodeEvent(5, false, 10, duration));
  for (let i = 0; i < 3; i++) receiver.receive(1, 1000, encodeEvent(5, true, 10, 800));
  receiver.receive(1, 3000, encodeEvent(11, false, 10, 160));
  receiver.receive(1, 5000, encodeEvent(1, true, 10, 800));
  receiver.receive(1, 5000, encodeEvent(1, true, 10, 800));
  receiver.receive(1, 1000, encodeEvent(5, true, 10, 800));
  assert.deepEqual(digits, ['5', '#', '1']);
});

test('the recorder places reordered packets by timestamp, survives an SSRC change, stops at its maximum', () => {
  let finished = 0;
  const recorder = new Recorder(1, () => finished++);
  const frame = (value: number) =>
    Int16Array.from({ length: 160 }, (_, i) => (i % 2 ? value : -value) * 1000);
  recorder.write(7, 1000, frame(1));
  recorder.write(7, 1320, frame(3));
  recorder.write(7, 1160, frame(2));
  recorder.write(9, 55, frame(4));
  const partial = recorder.stop();
  assert.deepEqual(
    [0, 160, 320, 480].map((i) => partial.samples[i]),
    [-1000, -2000, -3000, -4000],
  );
  assert.equal(partial.durationMs, 80);
  assert.equal(partial.empty, false);
  assert.equal(finished, 1);
  const full = new Recorder(0.5, () => {});
  for (let i = 0; i < 40; i++) full.write(1, i * 160, frame(0));
  const done = full.stop();
  assert.equal(done.samples.length, 4000);
  assert.equal(done.reason, 'max-length');
  assert.equal(done.empty, true);
});

test('tones, cadence and mixing', () => {
  const frame = new Int16Array(160);
  const tone = new ToneSource(1000, { durationMs: 40 });
  assert.ok(tone.read(frame));
  assert.ok(goertzelPower(frame, 8000, 1000) > 100 * goertzelPower(frame, 8000, 425));
  assert.ok(tone.read(frame));
  assert.equal(tone.read(frame), false);
  const ring = new ToneSource(425, { onMs: 20, offMs: 20 });
  ring.read(frame);
  assert.ok(frame.some((v) => v !== 0));
  ring.read(frame);
  assert.ok(frame.every((v) => v === 0));
  const mix = new MixSource(
    new PcmSource(new Int16Array(320).fill(100)),
    new PcmSource(new Int16Array(160).fill(50)),
  );
  assert.ok(mix.read(frame));
  assert.equal(frame[0], 150);
  assert.ok(mix.read(frame));
  assert.equal(frame[0], 100);
  assert.equal(mix.read(frame), false);
});

async function endpointPair(t: import('node:test').TestContext) {
  const base = 32000 + Math.floor(Math.random() * 1000) * 2;
  const engine = new MediaEngine({ portMin: base, portMax: base + 40 });
  t.after(() => engine.close());
  const a = await engine.createEndpoint();
  const b = await engine.createEndpoint();
  a.setRemote({ address: '127.0.0.1', port: b.port, payloadType: 8, telephoneEvent: 101 });
  b.setRemote({ address: '127.0.0.1', port: a.port, payloadType: 8, telephoneEvent: 101 });
  return { engine, a, b };
}

test('one endpoint plays a tone and sends DTMF, the other records the tone and reports the digits', async (t) => {
  const { a, b } = await endpointPair(t);
  const digits: string[] = [];
  b.onDtmf((event) => digits.push(event.digit));
  const recorder = b.record(5);
  assert.equal(await a.tone(1000, { durationMs: 400 }), 'done');
  await a.sendDtmf('1#9');
  // Sent is not yet received: the last digit's end packets may still be on their way (CI, load 11).
  await until(() => digits.length >= 3, 'the three digits arrived');
  const recording = recorder.stop();
  assert.deepEqual(digits, ['1', '#', '9']);
  const windows = dominantFrequencies(recording.samples, 8000, [425, 697, 1000, 1209, 1477], 30).filter(
    (w) => w.rms > 5000,
  );
  assert.ok(windows.length >= 8, `only ${windows.length} loud windows`);
  assert.ok(
    windows.every((w) => w.frequency === 1000 && w.share > 0.8),
    JSON.stringify(windows.filter((w) => w.frequency !== 1000 || w.share <= 0.8)),
  );
  assert.equal(recording.empty, false);
});

test('RTP headers are written and read in network byte order, the top bit of 32-bit fields included', () => {
  const packet = Buffer.alloc(12 + 4);
  writeRtpHeader(packet, 8, true, 0xfedc, 0xfedcba98, 0x89abcdef);
  assert.deepEqual(
    [...packet.subarray(0, 12)],
    [0x80, 0x88, 0xfe, 0xdc, 0xfe, 0xdc, 0xba, 0x98, 0x89, 0xab, 0xcd, 0xef],
  );
  assert.deepEqual(parseRtp(packet), {
    payloadType: 8,
    marker: true,
    sequence: 0xfedc,
    timestamp: 0xfedcba98,
    ssrc: 0x89abcdef,
    payload: packet.subarray(12),
  });
  // Sequence and timestamp wrap as RFC 3550 counters do.
  writeRtpHeader(packet, 0, false, 0x10001, 2 ** 32 + 5, 1);
  assert.deepEqual([...packet.subarray(0, 12)], [0x80, 0x00, 0x00, 0x01, 0, 0, 0, 5, 0, 0, 0, 1]);
});

test('a recording of silence is empty; foreign payload types and garbage are ignored', async (t) => {
  const { a, b } = await endpointPair(t);
  const recorder = b.record(5);
  let arrived = 0;
  b.onAudio((samples) => {
    arrived += samples.length;
  });
  const socket = dgram.createSocket('udp4');
  t.after(() => socket.close());
  const foreign = Buffer.alloc(172, 0x55);
  writeRtpHeader(foreign, 18, false, 1, 1, 1);
  socket.send(foreign, b.port, '127.0.0.1');
  socket.send(Buffer.from('garbage'), b.port, '127.0.0.1');
  await a.playPcm(new Int16Array(1600));
  await until(() => arrived >= 1600 && b.stats.ignored >= 2, 'the silence and both foreign packets arrived');
  const recording = recorder.stop();
  assert.ok(recording.samples.length >= 1600);
  assert.equal(recording.empty, true);
  assert.equal(b.stats.ignored, 2);
  assert.equal(parseRtp(Buffer.from('garbage')), undefined);
});

/** A media worker and an engine on this thread, on ports of their own, closed after the test. */
function workerAndLocal(t: TestContext) {
  const base = 36000 + Math.floor(Math.random() * 400) * 2;
  const worker = new WorkerMediaEngine({ portMin: base, portMax: base + 20 });
  const local = new MediaEngine({ portMin: base + 40, portMax: base + 60 });
  t.after(async () => {
    local.close();
    await worker.close();
  });
  return { worker, local };
}

test('endpoints in the media worker: tone, mix and shared PCM play, DTMF both ways, recording, relay between two worker endpoints, close', async (t) => {
  const { worker, local } = workerAndLocal(t);
  const w1 = await worker.createEndpoint();
  const w2 = await worker.createEndpoint();
  const l1 = await local.createEndpoint();
  const l2 = await local.createEndpoint();
  const remote = (port: number) => ({
    address: '127.0.0.1',
    port,
    payloadType: 0 as const,
    telephoneEvent: 101,
  });
  w1.setRemote(remote(l1.port));
  l1.setRemote(remote(w1.port));
  w2.setRemote(remote(l2.port));
  l2.setRemote(remote(w2.port));
  const loud = (samples: Int16Array, frequencies: number[]) =>
    dominantFrequencies(samples, 8000, frequencies, 30).filter((w) => w.rms > 3000);

  // The worker plays a tone, then shared PCM (no copy), then a mix; this thread records it.
  const heard = l1.record(10);
  assert.equal(await w1.tone(1000, { durationMs: 300 }), 'done');
  const pcm = new Int16Array(new SharedArrayBuffer(2 * 2400));
  pcm.set(
    Int16Array.from({ length: 2400 }, (_, i) => Math.round(9000 * Math.sin((2 * Math.PI * 600 * i) / 8000))),
  );
  assert.equal(await w1.playPcm(pcm), 'done');
  const heardSamples = heard.stop().samples;
  const windows = loud(heardSamples, [600, 1000]);
  assert.ok(windows.some((w) => w.frequency === 1000) && windows.some((w) => w.frequency === 600));

  // DTMF: this thread sends, the worker endpoint reports; the worker sends, this thread reports.
  const inWorker: string[] = [];
  w1.onDtmf((event) => inWorker.push(`${event.digit}/${event.source}`));
  const here: string[] = [];
  l1.onDtmf((event) => here.push(event.digit));
  await l1.sendDtmf('5*');
  await w1.sendDtmf('7');
  await until(() => inWorker.length >= 2 && here.length >= 1, `the digits both ways: ${inWorker} / ${here}`);
  assert.deepEqual(inWorker, ['5/rfc4733', '*/rfc4733']);
  assert.deepEqual(here, ['7']);

  // The worker records what this thread plays.
  const recording = w1.record(5);
  await l1.tone(425, { durationMs: 300 });
  recording.stop();
  const recorded = await recording.done;
  assert.equal(recorded.empty, false);
  assert.ok(loud(recorded.samples, [425, 1000]).every((w) => w.frequency === 425));

  // Relay inside the worker: what l2 plays into w2 comes out of w1 towards l1.
  const off = w1.connect(w2);
  const relayed = l1.record(5);
  let relayedSamples = 0;
  l1.onAudio((samples) => {
    relayedSamples += samples.length;
  });
  await l2.tone(800, { durationMs: 400 });
  // Half the tone came back out of w1: the relay runs (it lags the tone by the worker's queue).
  await until(() => relayedSamples >= 1600, 'the tone relayed through the worker');
  off();
  const relayedWindows = loud(relayed.stop().samples, [425, 800, 1000]);
  assert.ok(relayedWindows.length >= 4 && relayedWindows.every((w) => w.frequency === 800));

  // A play in progress ends as `closed` when the endpoint closes; the port is given back.
  const endless = w1.tone(1000);
  w1.close();
  assert.equal(await endless, 'closed');
  assert.equal(await w1.tone(1000), 'closed');
  w2.close();
  assert.equal(worker.endpointCount, 0);
});

test("the media worker counts each room member's mixing delay, and starts afresh when asked", async (t) => {
  const { worker, local } = workerAndLocal(t);
  const room = new WorkerRoom(worker);
  for (let i = 0; i < 2; i++) {
    const member = await worker.createEndpoint();
    const peer = await local.createEndpoint();
    member.setRemote({ address: '127.0.0.1', port: peer.port, payloadType: 0 });
    peer.setRemote({ address: '127.0.0.1', port: member.port, payloadType: 0 });
    room.join(member, DEFAULT_MEMBER);
    void peer.tone(500 + i * 300, { durationMs: 5000 });
  }
  let counted: number[] = [];
  let ticks: number[] = [];
  let mixMs = 0;
  const add = (sum: number[], counts: number[]) =>
    sum.length === 0 ? counts : sum.map((count, i) => count + counts[i]!);
  const total = (counts: number[]) => counts.reduce((sum, count) => sum + count, 0);
  await until(async () => {
    const figures = await worker.mixingDelays();
    counted = add(counted, figures.delays);
    ticks = add(ticks, figures.lateness);
    mixMs += figures.mixMs;
    return total(counted) >= 20;
  }, 'frames of both members mixed and counted');
  // Each take starts afresh: right after one, the next holds at most the frames mixed meanwhile.
  const again = await worker.mixingDelays();
  assert.ok(total(again.delays) < total(counted), `${total(again.delays)} after ${total(counted)}`);
  assert.ok(delayQuantile(counted, 0.5)! > 0);
  // The room's ticks were counted too: at least one per two frames of its two members.
  assert.ok(total(ticks) >= total(counted) / 2, `${total(ticks)} ticks for ${total(counted)} frames`);
  // The mixes' own time was summed: more than nothing, less than the frames' 20 ms each.
  assert.ok(mixMs > 0 && mixMs < total(ticks) * 20, `${mixMs} ms in ${total(ticks)} mixes`);
  room.close();
});

test('the media worker takes the nice value asked for, its thread alone; a refused one is reported and media still runs', async (t) => {
  const niceOf = (tid: string) =>
    Number(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
  const threadsAt = (nice: number) => fs.readdirSync('/proc/self/task').filter((tid) => niceOf(tid) === nice);
  // Above the process's own: raising a nice value needs no privilege, so this runs as any user.
  const asked = Math.min(19, os.getPriority() + 3);
  assert.deepEqual(threadsAt(asked), []);
  const reported: WorkerPriority[] = [];
  const worker = new WorkerMediaEngine({ niceness: asked }, (priority) => reported.push(priority));
  t.after(() => worker.close());
  await worker.createEndpoint();
  assert.deepEqual(reported, [{ niceness: asked }]);
  // One thread (the worker's) took it; the main thread kept its own.
  assert.equal(threadsAt(asked).length, 1);
  assert.notEqual(threadsAt(asked)[0], String(process.pid));
  assert.equal(niceOf(String(process.pid)), os.getPriority());

  const refused = new WorkerMediaEngine({ niceness: 25 });
  t.after(() => refused.close());
  const endpoint = await refused.createEndpoint();
  assert.equal(refused.priority?.niceness, 25);
  assert.match(refused.priority?.error ?? '', /range/);
  assert.ok(endpoint.port > 0);
});
