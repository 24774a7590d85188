/**
 * Conference rooms with real phones (docs/decisions.md "Conferences"): a number answered through
 * the call API, callers whose answered calls a test puts into a room, and what each phone hears
 * measured by Goertzel power in its decoded dump.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { Call } from '../src/telephony/calls/call.js';
import type { CallEngine } from '../src/telephony/calls/call-engine.js';
import { goertzelPower } from '../src/telephony/media/index.js';
import { callApiNumber, type Node, phone, sipAccount, soundSoFar, telephonyNode } from './calls.js';
import { type Client, eventually, loggedInClient, until } from './helper.js';
import type { Baresip } from './sip-peers.js';

export interface Scene {
  readonly node: Node;
  readonly client: Client;
  readonly engine: CallEngine;
  readonly owner: string;
  readonly number: string;
}

/** A node, a logged-in user subscribed to call events, and its number answered through the call API. */
export async function conferenceScene(t: TestContext, number: string): Promise<Scene> {
  const node = await telephonyNode(t);
  const { client, user } = await loggedInClient(node.app);
  // Every member's call counts against the number owner's concurrent calls (the default pack allows 2).
  await node.app.services.features.updatePack('default', { quota: { calls: 10 } });
  await callApiNumber(node.app, user.uuid, number);
  assert.equal((await client.call('GET', '/api/call/event?timeout=600')).status, 'ok');
  return { node, client, engine: node.app.services.telephony.calls!, owner: user.uuid, number };
}

/** A phone sending `microphone` that calls the scene's number; the API answers; its answered Call. */
export async function caller(
  t: TestContext,
  scene: Scene,
  name: string,
  microphone: Int16Array,
): Promise<{ peer: Baresip; call: Call }> {
  const peer = await phone(t, scene.node, await sipAccount(scene.node.app, name), { microphone });
  const before = new Set([...scene.engine.calls].map((call) => call.uuid));
  const established = peer.waitFor('CALL_ESTABLISHED', 20_000);
  peer.command('dial', scene.number);
  const call = await eventually(
    async () => [...scene.engine.calls].find((c) => !before.has(c.uuid) && c.status === 'ringing'),
    (found) => found !== undefined,
    'the call ringing',
    20_000,
  );
  assert.deepEqual(
    await scene.client.call('POST', `/api/call/${call!.uuid}/control`, { command: 'answer' }),
    { status: 'ok' },
  );
  await established;
  return { peer, call: call! };
}

/** Goertzel power of `hz` in the last `ms` the phone heard (a full-scale sine: about 0.25). */
export function power(peer: Baresip, hz: number, ms = 600): number {
  const audio = soundSoFar(peer);
  if (!audio) return 0;
  const n = Math.round((audio.sampleRate * ms) / 1000);
  return goertzelPower(audio.samples.subarray(Math.max(0, audio.samples.length - n)), audio.sampleRate, hz);
}

/** The phone's tones at amplitude 0.25 give about 0.0156; absent ones are far below. */
export const PRESENT = 0.003;
export const ABSENT = 0.0003;

/** Waits until the phone hears every tone of `present` and none of `absent`. */
export async function hearsExactly(peer: Baresip, present: number[], absent: number[], what: string) {
  await until(
    () => present.every((hz) => power(peer, hz) > PRESENT) && absent.every((hz) => power(peer, hz) < ABSENT),
    what,
    20_000,
    100,
  );
}
