/**
 * What the room's mixer does to real phones through the API's member control (docs/decisions.md
 * "Conferences", talk and floor; "Conferences: member and room control"): the floor goes to the
 * loudest talker, one who does not talk never gets it; volume_out scales what that member hears
 * by FreeSWITCH's factors (−4 → ×0.2, +2 → ×2.3) and nothing the others hear.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { caller, conferenceScene, power } from '../../../test/conference.js';
import { until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import { joinConference } from '../../telephony/conference/conference-step.js';
import type { MemberView } from '../../telephony/conference/room.js';
import { ToneSource } from '../../telephony/media/index.js';

requireTelephonyPackages();

/** 30 s of a tone at `amplitude`. */
function toneAt(hz: number, amplitude: number): Int16Array {
  const samples = new Int16Array(8000 * 30);
  new ToneSource(hz, { amplitude }).read(samples);
  return samples;
}

/** Amplitude of `hz` in what the phone heard last (a sine of amplitude x has power x²/4). */
const amplitude = (peer: Parameters<typeof power>[0], hz: number) => 2 * Math.sqrt(power(peer, hz));

test('the floor goes to the loudest talker and never to a member who does not talk; volume_out scales only what its member hears', async (t) => {
  const scene = await conferenceScene(t, '+4930555440');
  const { client, engine } = scene;
  const uuid = (await client.call('POST', '/api/conference', { description: 'Mix' })).uuid as string;
  const updates: [string, Partial<MemberView>][] = [];
  const room = engine.rooms.open(
    uuid,
    { enter: null, leave: null },
    { updated: (_room, call, changed) => updates.push([call, changed]) },
  );
  // a talks quietly, b five times as loud, c below the talk threshold (it only listens).
  const a = await caller(t, scene, 'mix_a', toneAt(600, 0.05));
  void joinConference(a.call, room);
  await until(() => room.member(a.call.uuid)?.floor === true, 'a, the only talker, holds the floor');
  const b = await caller(t, scene, 'mix_b', toneAt(1000, 0.25));
  const c = await caller(t, scene, 'mix_c', toneAt(1400, 0.001));
  void joinConference(b.call, room);
  void joinConference(c.call, room);
  await until(() => room.size === 3, 'three members');
  await until(
    () => room.member(b.call.uuid)?.floor === true && room.member(a.call.uuid)?.floor === false,
    'the floor moved to the louder b',
  );
  const floorOf = (call: string) =>
    updates.flatMap(([member, changed]) => (member === call && 'floor' in changed ? [changed.floor] : []));
  assert.deepEqual(floorOf(a.call.uuid), [true, false], 'a held the floor, then lost it to b');
  assert.deepEqual(floorOf(b.call.uuid), [true]);
  assert.deepEqual(floorOf(c.call.uuid), [], 'c never talked, never held the floor');
  assert.equal(room.member(c.call.uuid)?.talk, false);
  const listed = (await client.call('GET', `/api/conference/${uuid}/member`)).member as Record<
    string,
    { floor: boolean; talk: boolean }
  >;
  assert.deepEqual(
    [a, b, c].map(({ call }) => [listed[call.uuid]?.talk, listed[call.uuid]?.floor]),
    [
      [true, false],
      [true, true],
      [false, false],
    ],
  );

  // volume_out: c hears b (amplitude 0.25) at 0.2 then 2.3 times the level (within 15 %); a hears b as before.
  const B = 0.25;
  const near = (value: number, expected: number) => Math.abs(value - expected) < expected * 0.15;
  await until(
    () => near(amplitude(c.peer, 1000), B) && near(amplitude(a.peer, 1000), B),
    'c and a hear b at its level',
  );
  const memberPath = `/api/conference/${uuid}/member/${c.call.uuid}`;
  assert.deepEqual(await client.call('POST', memberPath, { volume_out: -4 }), { status: 'ok' });
  await until(() => near(amplitude(c.peer, 1000), B * 0.2), 'c hears b at 0.2 times the level').catch(
    (error: Error) => {
      throw new Error(`${error.message}: ${amplitude(c.peer, 1000)}`);
    },
  );
  assert.equal(room.member(c.call.uuid)?.volume_out, -4);
  assert.deepEqual(await client.call('POST', memberPath, { volume_out: 2 }), { status: 'ok' });
  await until(() => near(amplitude(c.peer, 1000), B * 2.3), 'c hears b at 2.3 times the level');
  assert.ok(near(amplitude(a.peer, 1000), B), `a still hears b as before (${amplitude(a.peer, 1000)} )`);
  // Outside −4..4: wrong-syntax, and c's level stays.
  assert.equal((await client.call('POST', memberPath, { volume_out: 5 })).status, 'wrong-syntax');
  assert.equal(room.member(c.call.uuid)?.volume_out, 2);
  assert.deepEqual(
    updates
      .filter(([member, changed]) => member === c.call.uuid && 'volume_out' in changed)
      .map(([, changed]) => changed.volume_out),
    [-4, 2],
  );

  for (const { peer } of [a, b, c]) {
    const closed = peer.waitFor('CALL_CLOSED', 20_000);
    peer.command('hangup');
    await closed;
  }
  await until(() => engine.rooms.get(uuid) === undefined, 'the room closed');
});
