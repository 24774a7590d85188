/**
 * What the real-call tests share: a Zentrale node with telephony on, SIP accounts with their
 * registered baresips, tones as microphones, what a baresip heard (Goertzel), and a platform
 * number answered by a v2 dialplan with an uploaded announcement.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { type App, buildApp } from '../src/app.js';
import type { Cdr } from '../src/modules/cdr/index.js';
import { loadConfig } from '../src/platform/config.js';
import { parseWav } from '../src/platform/content/wav.js';
import { dominantFrequencies } from '../src/telephony/media/goertzel.js';
import { ToneSource } from '../src/telephony/media/sources.js';
import { pcm16, wavFile } from './content-inputs.js';
import {
  build,
  buildUser,
  type Client,
  eventually,
  loggedInClient,
  tempDir,
  testEnv,
  until,
  upload,
} from './helper.js';
import {
  addSipAccount,
  type Baresip,
  type BaresipOptions,
  freePort,
  startBaresip,
  type TestSipAccount,
} from './sip-peers.js';
import { freePortRange } from './sipp.js';

export interface Node {
  app: App;
  sipPort: number;
}

/**
 * Starts a telephony node on ports found free now. Kamailio, another process, binds them later, so
 * a test running beside may take one in between: new ports then ("Address already in use"), up
 * to three tries; any other failure is the test's.
 */
async function onFreshPorts(start: (ports: Record<string, string>) => Promise<App>): Promise<Node> {
  for (let attempt = 1; ; attempt++) {
    // Kamailio listens on UDP and TCP.
    const sipPort = await freePort();
    const [min, max] = await freePortRange(40);
    try {
      const app = await start({
        TELEPHONY: 'on',
        SIP_PORT: String(sipPort),
        RTP_PORT_MIN: String(min),
        RTP_PORT_MAX: String(max),
      });
      assert.equal(app.services.telephony.state, 'running');
      return { app, sipPort };
    } catch (error) {
      if (attempt >= 3 || !/Address already in use/.test(String(error))) throw error;
    }
  }
}

export async function telephonyNode(t: TestContext, env: Record<string, string> = {}): Promise<Node> {
  const node = await onFreshPorts((ports) => build(t, { env: { ...ports, ...env } }));
  assert.ok(node.app.services.telephony.calls, 'the call engine runs');
  return node;
}

/**
 * `count` nodes with telephony on, sharing one PostgreSQL database (as a cluster does), each with
 * its own DATA_DIR, Kamailio and rtpengine ports.
 */
export async function telephonyNodesOnPostgres(
  t: TestContext,
  count: number,
  env: Record<string, string> = {},
): Promise<Node[]> {
  const shared = await testEnv(t, 'postgres', env);
  const nodes: Node[] = [];
  for (let i = 0; i < count; i++) {
    const node = await onFreshPorts(async (ports) => {
      const app = await buildApp(
        loadConfig({ ...shared, DATA_DIR: tempDir(t), PUBLIC_URL: `http://127.0.0.${i + 1}:8080`, ...ports }),
      );
      t.after(() => app.close());
      return app;
    });
    nodes.push(node);
  }
  return nodes;
}

export type Account = TestSipAccount;

/** An SDP offer of one PCMU stream, for an INVITE whose media no test reads. */
export const PCMU_OFFER = [
  'v=0',
  'o=test 1 1 IN IP4 127.0.0.1',
  's=test',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 40000 RTP/AVP 0',
  'a=rtpmap:0 PCMU/8000',
  '',
].join('\r\n');

export async function sipAccount(app: App, username: string, owner?: string): Promise<Account> {
  return addSipAccount(app, username, { owner: owner ?? (await buildUser(app)).uuid });
}

export function tone(frequency: number, seconds = 20): Int16Array {
  const samples = new Int16Array(8000 * seconds);
  new ToneSource(frequency, { amplitude: 0.25 }).read(samples);
  return samples;
}

/** A baresip registered as `account` through the node's Kamailio. */
export async function phone(t: TestContext, node: Node, account: Account, options: BaresipOptions = {}) {
  const registered = new Promise<void>((resolve, reject) => {
    // A lost registration event fails the test instead of holding it for ever.
    const timer = setTimeout(() => {
      off();
      reject(new Error(`${account.username} not reported registered within 30 s`));
    }, 30_000);
    const off = node.app.services.telephony.onRegistration((change) => {
      if (change.sipUser === account.username && change.registrations.length > 0) {
        clearTimeout(timer);
        off();
        resolve();
      }
    });
  });
  const peer = await startBaresip(t, {
    ...options,
    account: { ...account, user: account.username, proxy: `127.0.0.1:${node.sipPort}` },
  });
  await registered;
  return peer;
}

/**
 * A baresip of a new SIP account `username` (of `owner`, else of a new user) that answers by
 * command and sends `frequency` for a minute: baresip's audio ends with its microphone file, and
 * a call of several steps on a loaded machine outlasted 20 s (the phones fell silent).
 */
export async function tonePhone(
  t: TestContext,
  node: Node,
  username: string,
  frequency: number,
  owner?: string,
) {
  return phone(t, node, await sipAccount(node.app, username, owner), {
    answerMode: 'manual',
    microphone: tone(frequency, 60),
  });
}

/** What baresip heard during its calls (sndfile's decoded dump). */
export function heard(
  peer: Baresip,
  which: 'first' | 'last' = 'first',
): { frequency: number; share: number; rms: number }[] {
  const dumps = fs
    .readdirSync(peer.dir)
    .filter((name) => name.endsWith('-dec.wav'))
    .sort(
      (x, y) => fs.statSync(path.join(peer.dir, x)).mtimeMs - fs.statSync(path.join(peer.dir, y)).mtimeMs,
    );
  // The dump of the first call, or of the latest one (each call writes its own).
  const dump = which === 'first' ? dumps[0] : dumps[dumps.length - 1];
  assert.ok(dump, `no decoded dump in ${fs.readdirSync(peer.dir).join(', ')}`);
  const audio = completeWav(path.join(peer.dir, dump));
  return dominantFrequencies(audio.samples, audio.sampleRate, [425, 600, 1000, 1400], 30).filter(
    (w) => w.rms > 0.05,
  );
}

/**
 * A dump baresip has written whole: right after a call ends its header may already name a size
 * the file reaches only when the last samples are flushed (a test saw "longer than the file"),
 * so the read is tried again for up to two seconds.
 */
function completeWav(file: string): ReturnType<typeof parseWav> {
  for (let tries = 0; ; tries++) {
    try {
      return parseWav(fs.readFileSync(file));
    } catch (error) {
      if (tries >= 40) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
}

/**
 * The decoded dump of the peer's call under way (the newest), read while baresip still writes it:
 * the data chunk's declared size is not final yet, so the samples run to the end of the file.
 */
export function heardSoFar(peer: Baresip): { frequency: number; share: number; rms: number }[] {
  const audio = soundSoFar(peer);
  if (!audio) return [];
  return dominantFrequencies(audio.samples, audio.sampleRate, [425, 600, 1000, 1400], 30).filter(
    (w) => w.rms > 0.05,
  );
}

/** The samples of the peer's call under way so far (heardSoFar); undefined before any. */
export function soundSoFar(peer: Baresip): { samples: Float32Array; sampleRate: number } | undefined {
  const dumps = fs
    .readdirSync(peer.dir)
    .filter((name) => name.endsWith('-dec.wav'))
    .map((name) => ({ name, mtime: fs.statSync(path.join(peer.dir, name)).mtimeMs }))
    .sort((x, y) => x.mtime - y.mtime);
  const dump = dumps[dumps.length - 1];
  if (!dump) return undefined;
  const data = new Uint8Array(fs.readFileSync(path.join(peer.dir, dump.name)));
  const at = Buffer.from(data).indexOf('data');
  if (at < 0 || data.length < at + 8) return undefined;
  // parseWav reads a size of 0xffffffff as "to the end of the file"; whole samples only.
  const whole = data.subarray(0, data.length - ((data.length - at - 8) % 2));
  new DataView(whole.buffer, whole.byteOffset).setUint32(at + 4, 0xffffffff, true);
  return parseWav(whole);
}

/**
 * Resolves once the peer has heard `frequency` in at least `count` windows (30 ms) of its call under
 * way: audio reaches a peer in real time, so a test waits for what it needs heard instead of a
 * fixed time that a loaded machine may not give it.
 */
export async function hears(peer: Baresip, frequency: number, count: number, timeoutMs = 20_000) {
  await until(
    () => windowsOf(heardSoFar(peer), frequency) >= count,
    `${count} windows of ${frequency} Hz heard`,
    timeoutMs,
    100,
  );
}

export function windowsOf(windows: { frequency: number; share: number }[], frequency: number): number {
  return windows.filter((w) => w.frequency === frequency && w.share > 0.7).length;
}

/** Whether `first` was heard only before `then` began (two steps of a call, in this order). */
export function heardBefore(windows: { frequency: number; share: number }[], first: number, then: number) {
  const at = (frequency: number) =>
    windows.flatMap((w, index) => (w.frequency === frequency && w.share > 0.7 ? [index] : []));
  const firsts = at(first);
  const thens = at(then);
  return firsts.length > 0 && thens.length > 0 && firsts[firsts.length - 1]! < thens[0]!;
}

/** `number` added to `owner` with dialplan_enable on (it answers as its owner configured). */
export async function enabledNumber(app: App, owner: string, number: string): Promise<void> {
  await app.services.phones.addNumber(number, { userUuid: owner });
  await app.services.phones.setSwitches(number, { dialplan_enable: true });
}

/** `number` added to `owner` with call_enable the only switch on (the call API answers it). */
export async function callApiNumber(app: App, owner: string, number: string): Promise<void> {
  await app.services.phones.addNumber(number, { userUuid: owner });
  await app.services.phones.setSwitches(number, {
    call_enable: true,
    recording_enable: false,
    fax_enable: false,
    conference_enable: false,
  });
}

/** A fresh logged-in user holding `number` (dialplan_enable on): the set-up of most number calls. */
export async function numberOwner(app: App, number: string) {
  const { client, user } = await loggedInClient(app);
  await enabledNumber(app, user.uuid, number);
  return { client, user };
}

/** A number of a fresh user, answered by the v2 dialplan `dialplan` (dialplan_enable on). */
export async function numberWithDialplan(
  app: App,
  number: string,
  profiles: (announcement: string) => object[],
  audio: Float32Array,
  prepare: (owner: string) => Promise<unknown> = async () => {},
) {
  const { client, user } = await numberOwner(app, number);
  await prepare(user.uuid);
  const announcement = await uploadAnnouncement(app, client, audio);
  const dialplan = await client.call('POST', '/api/dialplan/v2', {
    dialplan: { profiles: profiles(announcement) },
  });
  assert.equal(dialplan.status, 'ok');
  const set = await client.call('POST', '/api/phone', { phone: { [number]: { dialplan: dialplan.uuid } } });
  assert.equal(set.status, 'ok');
  return { client, user };
}

/** A new announcement of the client's user with `audio` (8 kHz), converted. */
export async function uploadAnnouncement(app: App, client: Client, audio: Float32Array): Promise<string> {
  const announcement = (await client.call('POST', '/api/announcement', { description: 'greeting' }))
    .uuid as string;
  const uploaded = await upload(
    client,
    `/api/announcement/${announcement}/a.wav`,
    wavFile({ rate: 8000, body: pcm16(audio) }),
  );
  assert.equal(uploaded.status, 'ok');
  await app.services.content.idle();
  return announcement;
}

/** The next event `name` the client's user gets (long polling /api/event). */
export async function nextEvent(client: Client, name: string): Promise<Record<string, unknown>> {
  let next = 0;
  for (;;) {
    const events = (await client.call('GET', `/api/event?next=${next}&timeout=20`)).event as {
      id: number;
      event: string;
    }[];
    const found = events.find((event) => event.event === name);
    if (found) return found;
    if (events.length > 0) next = events[events.length - 1]!.id + 1;
  }
}

/** `peer` dials `target` and the call is established. */
export async function dial(peer: Baresip, target: string): Promise<void> {
  const established = peer.waitFor('CALL_ESTABLISHED', 20_000);
  peer.command('dial', target);
  await established;
}

/** `peer` hangs up; resolves when its call and those of `others` closed. */
export async function hangUp(peer: Baresip, ...others: Baresip[]): Promise<void> {
  const closed = [peer, ...others].map((each) => each.waitFor('CALL_CLOSED', 20_000));
  peer.command('hangup');
  await Promise.all(closed);
}

/**
 * A click-to-dial call of a fresh user: the user's phone `mine_01` (600 Hz) rings, the far
 * phone `carol_01` (1000 Hz) waits; the user's session is subscribed to call events. Resolves
 * while the user's phone rings; `connect` answers both phones in turn.
 */
export async function clickToDial(t: TestContext, node: Node) {
  const { client, user } = await loggedInClient(node.app);
  const own = await tonePhone(t, node, 'mine_01', 600, user.uuid);
  const far = await tonePhone(t, node, 'carol_01', 1000);
  assert.equal((await client.call('GET', '/api/call/event')).status, 'ok');
  const { dialled, connect } = await dialVia(client, own, 'mine_01', far, 'carol_01');
  const call = dialled.call as { uuid: string; state: string; direction: string };
  return { client, user, own, far, dialled, uuid: call.uuid, call, connect };
}

/**
 * POST /api/call/dial of the client's user from `via` to `to`; resolves while `via` rings.
 * `connect` answers `via`, then `to` once it rings.
 */
export async function dialVia(client: Client, via: Baresip, viaName: string, to: Baresip, toName: string) {
  const rings = via.waitFor('CALL_INCOMING', 20_000);
  const dialled = await client.call('POST', '/api/call/dial', { via: viaName, to: toName, timeout: 30 });
  await rings;
  const connect = async () => {
    const farRings = to.waitFor('CALL_INCOMING', 20_000);
    via.command('accept');
    await farRings;
    const talking = to.waitFor('CALL_ESTABLISHED', 20_000);
    to.command('accept');
    await talking;
  };
  return { dialled, connect };
}

/** Every event the client's session has, without waiting. */
export async function eventsOf(
  client: Client,
): Promise<{ id: number; event: string; [key: string]: unknown }[]> {
  return (await client.call('GET', '/api/event?next=0&timeout=0')).event as {
    id: number;
    event: string;
    [key: string]: unknown;
  }[];
}

/**
 * mute and unmute through `steer` on a connected call between the user's side `own` (sending
 * 600 Hz) and `far` (1000 Hz): out silences the user for the far side only, in the far side for
 * the user only, the directions kept apart; unmute brings both back.
 */
export async function mutesEachWay(
  steer: (body: Record<string, unknown>) => Promise<Record<string, unknown>>,
  own: Baresip,
  far: Baresip,
): Promise<void> {
  // mute out: far no longer hears the user, while the user still hears far (the clock here).
  assert.deepEqual(await steer({ command: 'mute', direction: 'out' }), { status: 'ok' });
  await hears(own, 1000, windowsOf(heardSoFar(own), 1000) + 10); // what was under way arrives
  const farHeard = windowsOf(heardSoFar(far), 600);
  await hears(own, 1000, windowsOf(heardSoFar(own), 1000) + 40);
  assert.ok(windowsOf(heardSoFar(far), 600) <= farHeard + 3, 'the far side does not hear the muted user');
  // mute in too, then unmute out: far hears the user again, the user hears nothing of far.
  assert.deepEqual(await steer({ command: 'mute', direction: 'in' }), { status: 'ok' });
  assert.deepEqual(await steer({ command: 'unmute', direction: 'out' }), { status: 'ok' });
  await hears(far, 600, windowsOf(heardSoFar(far), 600) + 10);
  const userHeard = windowsOf(heardSoFar(own), 1000);
  await hears(far, 600, windowsOf(heardSoFar(far), 600) + 40);
  assert.ok(windowsOf(heardSoFar(own), 1000) <= userHeard + 3, 'the user does not hear far while muted in');
  assert.deepEqual(await steer({ command: 'unmute' }), { status: 'ok' });
  await hears(own, 1000, userHeard + 20);
}

/** The CDRs of a user once `count` of them are written (they are written as legs end). */
export async function cdrsOf(app: App, owner: string, count: number): Promise<Cdr[]> {
  return eventually(
    () => app.services.cdrs.listCdrs({ owner }),
    (cdrs) => cdrs.length >= count,
    `${count} CDRs of the user`,
    20_000,
    50,
  );
}

/**
 * An attended transfer on a connected call between the user's side `own` (600 Hz) and `far`
 * (1000 Hz) to `target` (1400 Hz, the SIP account `targetSip`, answering by hand): the consult
 * (the user with the target, far held), cancel (the user with far again), a second consult, then
 * complete (far with the target, the user's phone released); far then hangs up. Each step is
 * asserted by what the phones hear.
 */
export async function consultsThenCompletes(scene: {
  client: Client;
  own: Baresip;
  far: Baresip;
  target: Baresip;
  targetSip: string;
  steer: (body: Record<string, unknown>) => Promise<Record<string, unknown>>;
}): Promise<void> {
  const { client, own, far, target: dave, targetSip, steer } = scene;
  // Nothing to complete or cancel yet.
  assert.equal((await steer({ command: 'transfer-complete' })).status, 'illegal-state');
  assert.equal((await steer({ command: 'transfer-cancel' })).status, 'illegal-state');
  assert.equal(
    (await steer({ command: 'transfer', attended: 'yes', target: { sip: targetSip } })).status,
    'wrong-syntax',
  );

  // The consult: the user hears dave and dave the user; carol is held and hears neither.
  const consult = async () => {
    const rings = dave.waitFor('CALL_INCOMING', 20_000);
    const started = steer({ command: 'transfer', attended: true, target: { sip: targetSip } });
    await rings;
    dave.command('accept');
    assert.deepEqual(await started, { status: 'ok' });
    const carolHeard = windowsOf(heardSoFar(far), 600);
    await Promise.all([hears(own, 1400, windowsOf(heardSoFar(own), 1400) + 20), hears(dave, 600, 20)]);
    // far heard the user no more (a few windows in flight at the swap at most), and never dave.
    assert.ok(windowsOf(heardSoFar(far), 600) <= carolHeard + 5, 'carol is held while the user consults');
    assert.equal(windowsOf(heardSoFar(far), 1400), 0, 'carol did not hear dave during the consult');
  };
  await consult();
  // One transfer at a time.
  assert.equal((await steer({ command: 'transfer', target: { sip: targetSip } })).status, 'illegal-state');

  // Cancel: dave is hung up, the user and carol talk again.
  const daveClosed = dave.waitFor('CALL_CLOSED', 20_000);
  assert.deepEqual(await steer({ command: 'transfer-cancel' }), { status: 'ok' });
  await daveClosed;
  await Promise.all([
    hears(far, 600, windowsOf(heardSoFar(far), 600) + 20),
    hears(own, 1000, windowsOf(heardSoFar(own), 1000) + 20),
  ]);
  assert.equal((await steer({ command: 'transfer-complete' })).status, 'illegal-state');

  // Again, then complete: carol and dave talk, the user's phone is released.
  await consult();
  const ownClosed = own.waitFor('CALL_CLOSED', 20_000);
  assert.deepEqual(await steer({ command: 'transfer-complete' }), { status: 'ok' });
  await ownClosed;
  await Promise.all([hears(far, 1400, 20), hears(dave, 1000, 20)]);
  const closed = [far.waitFor('CALL_CLOSED', 20_000), dave.waitFor('CALL_CLOSED', 20_000)];
  far.command('hangup');
  await Promise.all(closed);
  await until(
    async () => ((await client.call('GET', '/api/call')).call as unknown[]).length === 0,
    'the call ended',
  );
  // far heard the user, then (after the consults) dave.
  assert.ok(heardBefore(heard(far), 600, 1400), 'carol heard the user before dave');
  // The target's second call: the consult with the user, then carol.
  assert.ok(heardBefore(heard(dave, 'last'), 600, 1000), 'dave heard the user, then carol');
}

/**
 * The recording a call's record-start made (its recording_new event, after record-stop) as
 * Goertzel windows of `frequencies` that are loud and clear: what the recording holds.
 */
export async function recordedTones(node: Node, client: Client, user: string, frequencies: number[]) {
  await until(
    async () => (await eventsOf(client)).some((event) => event.event === 'recording_new'),
    'recording_new',
    20_000,
  );
  const recording = (await eventsOf(client)).find((event) => event.event === 'recording_new')!
    .recording as string;
  await node.app.services.content.idle();
  const key = await node.app.services.recordings.audioKey(user, recording, 'wav');
  const audio = parseWav(new Uint8Array(await node.app.services.content.storage.read(key)));
  return dominantFrequencies(audio.samples, audio.sampleRate, frequencies, 30).filter(
    (w) => w.rms > 0.05 && w.share > 0.7,
  );
}

/**
 * A transfer to `target`'s phone given up by transfer-cancel while it rings: the cancel answers
 * at once (it does not wait behind the ringing transfer), the phone stops ringing, and the
 * transfer answers fail.
 */
export async function cancelsWhileRinging(
  steer: (body: Record<string, unknown>) => Promise<Record<string, unknown>>,
  target: Baresip,
  transfer: Record<string, unknown>,
): Promise<void> {
  const ring = target.waitFor('CALL_INCOMING', 20_000);
  const transferring = steer(transfer);
  await ring;
  const stopped = target.waitFor('CALL_CLOSED', 20_000);
  assert.deepEqual(await steer({ command: 'transfer-cancel' }), { status: 'ok' });
  await stopped;
  assert.equal((await transferring).status, 'fail');
}
