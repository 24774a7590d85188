/**
 * Conference rooms with real phones (docs/decisions.md "Conferences"):
 * baresips call a number answered through the call API, and the engine puts each answered call
 * into a room (joinConference). What each phone hears is measured by Goertzel power in its
 * decoded dump: each hears the others' tones and not its own; mute, deaf and volume_in change
 * that; talk follows who talks; a PIN refuses and admits; the recording holds the mix.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { cdrsOf, tone } from '../../../test/calls.js';
import { ABSENT, caller, conferenceScene, hearsExactly, PRESENT, power } from '../../../test/conference.js';
import { until } from '../../../test/helper.js';
import type { Baresip } from '../../../test/sip-peers.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import { newUuid } from '../../platform/ids.js';
import type { Call } from '../calls/call.js';
import { goertzelPower, ToneSource } from '../media/index.js';
import { joinConference } from './conference-step.js';
import type { MemberView, Room } from './room.js';

requireTelephonyPackages();

const NUMBER = '+4930555300';

const setUp = (t: TestContext) => conferenceScene(t, NUMBER);

/** Presses keys, each once the engine has it (RFC 4733 events read one by one). */
async function press(peer: Baresip, call: Call, digits: string): Promise<void> {
  for (const digit of digits) {
    const got = new Promise<void>((resolve) => call.leg!.onDtmf(() => resolve()));
    peer.command('sndcode', digit);
    await got;
  }
}

test('music while alone; three members each hear the other two and not themselves; mute, deaf and volume_in act on what is heard; talk follows who talks', async (t) => {
  const scene = await setUp(t);
  const updates: [string, Partial<MemberView>][] = [];
  const events: string[] = [];
  let recording: Int16Array | undefined;
  // The room's id is its conference's UUID (the members' CDRs name it).
  const id = newUuid();
  const stopped = new Promise<void>((resolve) => {
    scene.engine.rooms.open(
      id,
      { recordSeconds: 120, music: () => new ToneSource(425) },
      {
        started: () => events.push('started'),
        joined: (_room, member) => events.push(`joined ${member.call}`),
        left: (_room, member) => events.push(`left ${member.call}`),
        updated: (_room, call, changed) => updates.push([call, changed]),
        stopped: (_room, mix) => {
          events.push('stopped');
          recording = mix?.samples;
          resolve();
        },
      },
    );
  });
  const room: Room = scene.engine.rooms.get(id)!;
  const a = await caller(t, scene, 'conf_a', tone(600, 60));
  const b = await caller(t, scene, 'conf_b', tone(1000, 60));
  const c = await caller(t, scene, 'conf_c', tone(1400, 60));
  // a alone hears the music; it stops once b and c join.
  const ended = [joinConference(a.call, room)];
  await hearsExactly(a.peer, [425], [600], 'a alone hears the music');
  ended.push(...[b, c].map(({ call }) => joinConference(call, room)));
  assert.equal(room.size, 3);

  await hearsExactly(a.peer, [1000, 1400], [600, 425], 'a hears b and c, not itself nor the music');
  await hearsExactly(b.peer, [600, 1400], [1000, 425], 'b hears a and c, not itself');
  await hearsExactly(c.peer, [600, 1000], [1400, 425], 'c hears a and b, not itself');
  // Each phone's own tone never came back to it, over the whole call.
  for (const [{ peer }, own] of [
    [a, 600],
    [b, 1000],
    [c, 1400],
  ] as const)
    assert.ok(power(peer, own, 60_000) < ABSENT, `${own} Hz came back to its sender`);

  // Mute: a's tone reaches no one, the others still do; unmute brings it back.
  room.control(a.call.uuid, { mute: true });
  await hearsExactly(b.peer, [1400], [600], 'b no longer hears muted a');
  await hearsExactly(c.peer, [1000], [600], 'c no longer hears muted a');
  room.control(a.call.uuid, { mute: false });
  await hearsExactly(b.peer, [600, 1400], [], 'b hears a again');

  // Deaf: the room no longer reaches c, while c still reaches the others.
  room.control(c.call.uuid, { deaf: true });
  await hearsExactly(c.peer, [], [600, 1000], 'deaf c hears nothing');
  assert.ok(power(a.peer, 1400) > PRESENT, 'a still hears deaf c');
  room.control(c.call.uuid, { deaf: false });
  await hearsExactly(c.peer, [600, 1000], [], 'c hears the room again');

  // volume_in of a: b hears a's tone 2.3 times (+2), then 0.6 times (−2) as loud (amplitude).
  const base = Math.sqrt(power(b.peer, 600));
  const near = (ratio: number) => Math.abs(Math.sqrt(power(b.peer, 600)) / base - ratio) < ratio * 0.15;
  room.control(a.call.uuid, { volume_in: 2 });
  await until(() => near(2.3), 'a heard 2.3 times as loud', 20_000, 100);
  room.control(a.call.uuid, { volume_in: -2 });
  await until(() => near(0.6), 'a heard 0.6 times as loud', 20_000, 100);
  assert.throws(() => room.control(a.call.uuid, { volume_in: 5 }), { code: 'wrong-volume' });

  // A fourth member talks for a few seconds, then falls silent: its talk goes true, then false,
  // while a, who sends all along, is never reported silent.
  // baresip loops its microphone: 4 s of tone, then 30 s of silence.
  const speech = new Int16Array(8000 * 34);
  speech.set(tone(425, 4));
  const d = await caller(t, scene, 'conf_d', speech);
  void joinConference(d.call, room);
  const talkOf = (call: Call) =>
    updates.flatMap(([uuid, changed]) => (uuid === call.uuid && 'talk' in changed ? [changed.talk] : []));
  await until(() => talkOf(d.call).join() === 'true,false', 'd talks, then stops', 30_000, 100).catch(
    (error: Error) => {
      throw new Error(`${error.message}: talk of d ${talkOf(d.call).join()}, a ${talkOf(a.call).join()}`);
    },
  );
  assert.deepEqual(talkOf(a.call), [true]);
  assert.ok(
    updates.some(([, changed]) => changed.floor === true),
    'the floor went to a talker',
  );

  for (const { peer } of [a, b, c, d]) {
    const closed = peer.waitFor('CALL_CLOSED', 20_000);
    peer.command('hangup');
    await closed;
  }
  assert.deepEqual(await Promise.all(ended), ['ended', 'ended', 'ended']);
  await stopped;
  assert.equal(events[0], 'started');
  assert.equal(events.at(-1), 'stopped');
  assert.equal(events.filter((event) => event.startsWith('joined')).length, 4);
  assert.equal(events.filter((event) => event.startsWith('left')).length, 4);
  // The recording of the mix holds the three tones.
  assert.ok(recording && recording.length > 8000 * 5, 'a recording of the mix');
  const mix = Float32Array.from(recording, (sample) => sample / 32768);
  for (const hz of [600, 1000, 1400])
    assert.ok(goertzelPower(mix, 8000, hz) > PRESENT / 10, `${hz} Hz in the mix`);
  assert.equal(scene.engine.rooms.get(id), undefined);
  // One CDR per member: service conference, conference_id the room's.
  const cdrs = await cdrsOf(scene.node.app, scene.owner, 4);
  assert.deepEqual(
    cdrs.map((cdr) => [cdr.service, cdr.conference_id]),
    Array.from({ length: 4 }, () => ['conference', id]),
  );
});

test('a PIN refused three times hangs up without joining; the right PIN joins; a full or locked room refuses; a kick hangs up', async (t) => {
  const scene = await setUp(t);
  const joined: string[] = [];
  const left: string[] = [];
  const room = scene.engine.rooms.open(
    'room-pin',
    { pin: '4321', maxMembers: 1, music: () => new ToneSource(425) },
    { joined: (_r, m) => joined.push(m.call), left: (_r, m) => left.push(m.call) },
  );

  const wrong = await caller(t, scene, 'pin_wrong', tone(600, 60));
  const closed = wrong.peer.waitFor('CALL_CLOSED', 30_000);
  const refused = joinConference(wrong.call, room);
  await press(wrong.peer, wrong.call, '1111');
  await press(wrong.peer, wrong.call, '12#');
  await press(wrong.peer, wrong.call, '4322');
  assert.equal(await refused, 'pin-refused');
  await closed;
  assert.deepEqual(joined, []);
  assert.equal(room.size, 0);

  const right = await caller(t, scene, 'pin_right', tone(1000, 60));
  const entered = joinConference(right.call, room);
  await press(right.peer, right.call, '99#');
  await press(right.peer, right.call, '4321');
  await until(() => room.size === 1, 'the caller joined');
  assert.deepEqual(joined, [right.call.uuid]);
  // Alone in the room: the music plays (and not the caller's own tone).
  await hearsExactly(right.peer, [425], [1000], 'the music while alone');

  // Full (max members 1), then, with room again, locked: refused before any PIN is asked.
  const late = await caller(t, scene, 'pin_late', tone(1400, 60));
  await assert.rejects(joinConference(late.call, room), { code: 'full' });
  // A kick ends the member's call.
  const gone = right.peer.waitFor('CALL_CLOSED', 20_000);
  room.kick(right.call);
  await gone;
  assert.equal(await entered, 'left');
  assert.deepEqual(left, [right.call.uuid]);
  assert.equal(room.size, 0);
  assert.throws(() => room.control(right.call.uuid, { mute: true }), { code: 'no-member' });
  room.locked = true;
  await assert.rejects(joinConference(late.call, room), { code: 'locked' });
  assert.deepEqual(joined, [right.call.uuid]);
});
