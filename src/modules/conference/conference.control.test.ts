/**
 * Member and room control of a live room through the API (docs/decisions.md "Conferences: member
 * and room control"), with real phones: the room is opened on the engine under the conference's
 * UUID and the answered calls are put into it; what each phone hears is measured by Goertzel power.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phone, sipAccount, tone } from '../../../test/calls.js';
import { ABSENT, caller, conferenceScene, hearsExactly, PRESENT, power } from '../../../test/conference.js';
import { loggedInClient, until } from '../../../test/helper.js';
import { linkUsers } from '../../../test/object-store.js';
import type { Baresip } from '../../../test/sip-peers.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import { joinConference } from '../../telephony/conference/conference-step.js';
import type { MemberView } from '../../telephony/conference/room.js';
import { ToneSource } from '../../telephony/media/index.js';

requireTelephonyPackages();

/** 30 s of a tone at `amplitude` (a quiet one leaves room for volume_in +4 without clipping). */
function quietTone(hz: number, amplitude: number): Int16Array {
  const samples = new Int16Array(8000 * 30);
  new ToneSource(hz, { amplitude }).read(samples);
  return samples;
}

/** Amplitude 0.1 gives a Goertzel power of about 0.0025: present above a tenth of that. */
const QUIET_PRESENT = 0.0008;

test('the API controls a live room: members listed; mute, deaf, volume_in +4, floor, mute-all but the moderator, lock and kick act on the room; each refusal changes nothing', async (t) => {
  const scene = await conferenceScene(t, '+4930555310');
  const { client, engine, node } = scene;
  const uuid = (await client.call('POST', '/api/conference', { description: 'Board' })).uuid as string;
  const updates: [string, Partial<MemberView>][] = [];
  const room = engine.rooms.open(
    uuid,
    { enter: null, leave: null },
    {
      updated: (_room, call, changed) => updates.push([call, changed]),
    },
  );
  const a = await caller(t, scene, 'ctl_a', quietTone(600, 0.1));
  const b = await caller(t, scene, 'ctl_b', tone(1000, 30));
  const c = await caller(t, scene, 'ctl_c', tone(1400, 30));
  for (const { call } of [a, b, c]) void joinConference(call, room);
  await until(() => room.size === 3, 'three members');
  const hearsA = (peer: Baresip) => power(peer, 600) > QUIET_PRESENT;
  await until(() => hearsA(b.peer) && power(b.peer, 1400) > PRESENT, 'b hears a and c');

  // The members, in joining order, paged.
  const listed = await client.call('GET', `/api/conference/${uuid}/member`);
  assert.equal(listed.status, 'ok');
  const members = listed.member as Record<string, Record<string, unknown>>;
  assert.deepEqual(Object.keys(members), [a.call.uuid, b.call.uuid, c.call.uuid]);
  assert.deepEqual(
    { ...members[a.call.uuid], time: 0, talk: false, floor: false },
    {
      time: 0,
      moderator: false,
      mute: false,
      deaf: false,
      talk: false,
      floor: false,
      volume_in: 0,
      volume_out: 0,
    },
  );
  const page = await client.call('GET', `/api/conference/${uuid}/member?count=2`);
  assert.deepEqual(Object.keys(page.member as object), [a.call.uuid, b.call.uuid]);

  // Refusals change nothing: a volume outside −4..4, an empty change, a reader, a stranger.
  const memberPath = (call: { uuid: string }) => `/api/conference/${uuid}/member/${call.uuid}`;
  assert.equal((await client.call('POST', memberPath(a.call), { volume_in: 5 })).status, 'wrong-syntax');
  assert.equal((await client.call('POST', memberPath(a.call), { volume_out: -5 })).status, 'wrong-syntax');
  assert.equal((await client.call('POST', memberPath(a.call), {})).status, 'wrong-syntax');
  assert.equal((await client.call('POST', `/api/conference/${uuid}/control`, {})).status, 'wrong-syntax');
  const { client: reader, user: readerUser } = await loggedInClient(node.app);
  const { client: stranger } = await loggedInClient(node.app);
  await linkUsers(node.app, scene.owner, readerUser.uuid);
  const tags = await node.app.services.tags.getUserTags(scene.owner);
  await client.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });
  for (const [who, status] of [
    [reader, 'access-denied'],
    [stranger, 'wrong-object'],
  ] as const) {
    assert.equal((await who.call('GET', `/api/conference/${uuid}/member`)).status, status);
    assert.equal((await who.call('POST', memberPath(a.call), { mute: true })).status, status);
    assert.equal((await who.call('DELETE', memberPath(b.call))).status, status);
    assert.equal((await who.call('POST', `/api/conference/${uuid}/control`, { lock: true })).status, status);
  }
  assert.equal(room.member(a.call.uuid)?.mute, false);
  assert.equal(room.member(a.call.uuid)?.volume_in, 0);
  assert.equal(room.size, 3);
  assert.equal(room.locked, false);
  assert.equal(updates.filter(([, changed]) => 'mute' in changed || 'volume_in' in changed).length, 0);

  // Mute: a's tone reaches no one; unmute brings it back.
  assert.deepEqual(await client.call('POST', memberPath(a.call), { mute: true }), { status: 'ok' });
  await until(() => power(b.peer, 600) < ABSENT && power(b.peer, 1400) > PRESENT, 'b no longer hears a');
  await until(() => power(c.peer, 600) < ABSENT, 'c no longer hears a');
  await client.call('POST', memberPath(a.call), { mute: false });
  await until(() => hearsA(b.peer), 'b hears a again');

  // Deaf: the room no longer reaches c, while c still reaches a.
  await client.call('POST', memberPath(c.call), { deaf: true });
  await until(() => power(c.peer, 600) < ABSENT && power(c.peer, 1000) < ABSENT, 'deaf c hears nothing');
  assert.ok(power(a.peer, 1400) > PRESENT, 'a still hears deaf c');
  await client.call('POST', memberPath(c.call), { deaf: false });
  await hearsExactly(c.peer, [1000], [1400], 'c hears the room again');

  // volume_in +4: b hears a's tone 4.3 times as loud (amplitude, within 15 %).
  const base = Math.sqrt(power(b.peer, 600));
  assert.deepEqual(await client.call('POST', memberPath(a.call), { volume_in: 4 }), { status: 'ok' });
  await until(() => Math.abs(Math.sqrt(power(b.peer, 600)) / base - 4.3) < 4.3 * 0.15, 'a 4.3 times as loud');
  assert.equal(room.member(a.call.uuid)?.volume_in, 4);

  // Floor given to b: it holds it whoever talks; taken back, it goes to the loudest talker.
  await client.call('POST', memberPath(b.call), { floor: true });
  assert.equal(room.member(b.call.uuid)?.floor, true);
  assert.deepEqual(
    room
      .list()
      .filter((member) => member.floor)
      .map((member) => member.call),
    [b.call.uuid],
  );
  const shown = await client.call('GET', `/api/conference/${uuid}/member`);
  assert.equal((shown.member as Record<string, { floor: boolean }>)[b.call.uuid]!.floor, true);
  // Taken back, the floor is the loudest talker's (the three all talk: one of them holds it).
  await client.call('POST', memberPath(b.call), { floor: false });
  await until(() => room.list().filter((member) => member.floor).length === 1, 'the floor to a talker');

  // Mute-all leaves the moderator a unmuted: a hears neither b nor c, b still hears a.
  room.moderate(a.call.uuid);
  const moderators = (await client.call('GET', `/api/conference/${uuid}/member`)).member as Record<
    string,
    { moderator: boolean }
  >;
  assert.deepEqual(
    [a, b, c].map(({ call }) => moderators[call.uuid]?.moderator),
    [true, false, false],
  );
  await client.call('POST', `/api/conference/${uuid}/control`, { mute_all: true });
  assert.deepEqual(
    room.list().map((member) => member.mute),
    [false, true, true],
  );
  await hearsExactly(a.peer, [], [1000, 1400], 'a hears nobody of the muted');
  assert.ok(hearsA(b.peer), 'b still hears the moderator');
  await client.call('POST', `/api/conference/${uuid}/control`, { mute_all: false });
  await until(() => power(a.peer, 1000) > PRESENT, 'a hears b again');

  // Lock: a new caller is refused; unlocked, the room takes it again.
  await client.call('POST', `/api/conference/${uuid}/control`, { lock: true });
  const d = await caller(t, scene, 'ctl_d', tone(425, 30));
  await assert.rejects(joinConference(d.call, room), { code: 'locked' });
  assert.equal(room.size, 3);
  await client.call('POST', `/api/conference/${uuid}/control`, { lock: false });
  assert.equal(room.admits(), undefined);

  // Kick: b's call ends; b is then no member: illegal-state for each control.
  const closed = b.peer.waitFor('CALL_CLOSED', 20_000);
  assert.deepEqual(await client.call('DELETE', memberPath(b.call)), { status: 'ok' });
  await closed;
  assert.equal(room.member(b.call.uuid), undefined);
  assert.equal((await client.call('POST', memberPath(b.call), { mute: true })).status, 'illegal-state');
  assert.equal((await client.call('DELETE', memberPath(b.call))).status, 'illegal-state');
  assert.deepEqual(
    Object.keys((await client.call('GET', `/api/conference/${uuid}/member`)).member as object),
    [a.call.uuid, c.call.uuid],
  );

  // Everyone gone: the room is not live (no members; room controls are illegal-state).
  for (const { peer } of [a, c, d]) {
    const gone = peer.waitFor('CALL_CLOSED', 20_000);
    peer.command('hangup');
    await gone;
  }
  await until(() => engine.rooms.get(uuid) === undefined, 'the room closed');
  assert.deepEqual((await client.call('GET', `/api/conference/${uuid}/member`)).member, {});
  assert.equal(
    (await client.call('POST', `/api/conference/${uuid}/control`, { lock: true })).status,
    'illegal-state',
  );
});

test('dial-out: the call is answered at once with its UUID and joins the room when the callee answers; a reader or a stranger dials nobody', async (t) => {
  const scene = await conferenceScene(t, '+4930555311');
  const { client, engine, node } = scene;
  const uuid = (await client.call('POST', '/api/conference', { description: 'Dial' })).uuid as string;
  const room = engine.rooms.open(uuid, { enter: null, leave: null });
  const a = await caller(t, scene, 'dial_a', tone(600, 30));
  void joinConference(a.call, room);
  const callee = await sipAccount(node.app, 'dialb_01');
  const b = await phone(t, node, callee, { microphone: tone(1000, 30) });

  const { client: reader, user: readerUser } = await loggedInClient(node.app);
  const { client: stranger } = await loggedInClient(node.app);
  await linkUsers(node.app, scene.owner, readerUser.uuid);
  const tags = await node.app.services.tags.getUserTags(scene.owner);
  await client.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });
  const calls = engine.calls.size;
  assert.equal(
    (await reader.call('POST', `/api/conference/${uuid}/dial`, { to: 'dialb_01' })).status,
    'access-denied',
  );
  assert.equal(
    (await stranger.call('POST', `/api/conference/${uuid}/dial`, { to: 'dialb_01' })).status,
    'wrong-object',
  );
  assert.equal((await client.call('POST', `/api/conference/${uuid}/dial`, {})).status, 'missing-element');
  assert.equal(engine.calls.size, calls);

  const established = b.waitFor('CALL_ESTABLISHED', 20_000);
  const dialled = await client.call('POST', `/api/conference/${uuid}/dial`, { to: 'dialb_01', timeout: 30 });
  assert.equal(dialled.status, 'ok');
  const member = dialled.call as string;
  assert.ok(engine.calls.get(member), 'the call exists when its UUID is answered');
  await established;
  await until(() => room.member(member) !== undefined, 'the callee joined the room');
  await hearsExactly(b, [600], [1000], 'the callee hears a, not itself');
  await hearsExactly(a.peer, [1000], [600], 'a hears the callee');
  assert.deepEqual(
    Object.keys((await client.call('GET', `/api/conference/${uuid}/member`)).member as object),
    [a.call.uuid, member],
  );
  const closed = b.waitFor('CALL_CLOSED', 20_000);
  await client.call('DELETE', `/api/conference/${uuid}/member/${member}`);
  await closed;
  assert.equal(room.size, 1);
});
