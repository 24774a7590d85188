/**
 * Calls into conference rooms (docs/decisions.md "Conferences"): real phones (baresip SIP
 * accounts, a caller through the carrier stand-in) dial a conference's number and enter its
 * room. What each hears is measured by Goertzel power: each member hears the others' tones and
 * not its own; a room that can't take a caller answers with the special information tone and
 * hangs up. The owner's subscribed session sees the room's events in order; the members' CDRs
 * are conference records; the mix becomes a recording.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import {
  cdrsOf,
  hears,
  type Node,
  phone,
  sipAccount,
  soundSoFar,
  telephonyNode,
  tone,
  uploadAnnouncement,
} from '../../../test/calls.js';
import { startCarrier } from '../../../test/carrier.js';
import { buildUser, type Client, eventually, loggedInClient, until } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import type { Baresip } from '../../../test/sip-peers.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import type { Call } from '../../telephony/index.js';
import { goertzelPower } from '../../telephony/media/index.js';

requireTelephonyPackages();

const NUMBER = '+4930555400';

interface Scene {
  node: Node;
  client: Client;
  owner: string;
  conference: string;
}

/** A user with NUMBER (default switches: conference_enable on), a conference dialled by it, the owner subscribed. */
async function setUp(t: TestContext, settings: Record<string, unknown>, env: Record<string, string> = {}) {
  const node = await telephonyNode(t, env);
  const { client, user } = await loggedInClient(node.app);
  // Every member's call counts against the owner's concurrent calls (the default pack allows 2).
  await node.app.services.features.updatePack('default', { quota: { calls: 10 } });
  await node.app.services.phones.addNumber(NUMBER, { userUuid: user.uuid });
  const created = await client.call('POST', '/api/conference', {
    description: 'Daily',
    phone: [NUMBER],
    ...settings,
  });
  assert.equal(created.status, 'ok');
  const conference = created.uuid as string;
  assert.equal((await client.call('GET', `/api/conference/${conference}/event?timeout=600`)).status, 'ok');
  return { node, client, owner: user.uuid, conference } satisfies Scene;
}

/** A baresip of a SIP account (of `owner`, else of a new user) sending `microphone`. */
async function member(t: TestContext, scene: Scene, name: string, frequency: number, owner?: string) {
  const account = await sipAccount(scene.node.app, name, owner);
  return phone(t, scene.node, account, { microphone: tone(frequency, 60) });
}

/** The engine's call from `from` under way. */
function engineCall(scene: Scene, from: string): Promise<Call> {
  const { calls } = scene.node.app.services.telephony.calls!;
  return eventually(
    async () => [...calls].find((call) => call.from === from && !call.ended && call.leg),
    (found) => found !== undefined,
    `the call from ${from} answered`,
    20_000,
  ) as Promise<Call>;
}

/** Presses keys, each once the engine has it (RFC 4733 events read one by one). */
async function press(peer: Baresip, call: Call, digits: string): Promise<void> {
  for (const digit of digits) {
    const got = new Promise<void>((resolve) => call.leg!.onDtmf(() => resolve()));
    peer.command('sndcode', digit);
    await got;
  }
}

/** Goertzel power of `hz` in the last 600 ms of `samples` (a full-scale sine: about 0.25). */
function power(samples: Float32Array | undefined, hz: number): number {
  if (!samples) return 0;
  return goertzelPower(samples.subarray(Math.max(0, samples.length - 4800)), 8000, hz);
}

/** The tones at amplitude 0.25 give about 0.0156; absent ones are far below. */
const PRESENT = 0.003;
const ABSENT = 0.0003;

async function hearsExactly(
  listen: () => Float32Array | undefined,
  present: number[],
  absent: number[],
  what: string,
) {
  await until(
    () =>
      present.every((hz) => power(listen(), hz) > PRESENT) &&
      absent.every((hz) => power(listen(), hz) < ABSENT),
    what,
    20_000,
    100,
  );
}

const baresipHeard = (peer: Baresip) => () => {
  const audio = soundSoFar(peer);
  return audio && audio.sampleRate === 8000 ? audio.samples : undefined;
};

const names = (events: { event: string }[]) => events.map((event) => event.event);

test('three members (two SIP accounts, one caller through the carrier) each hear the other two and not themselves; a fourth finds the room full; events, CDRs and the recording', async (t) => {
  const carrier = await startCarrier(t);
  const scene = await setUp(t, { max_members: 3, record: true }, { CARRIER_URI: carrier.uri });
  const { conference } = scene;
  await newEvents(scene.client);

  // a: another user's SIP account; b: the owner's own (a moderator); c: from outside.
  const other = await buildUser(scene.node.app);
  const a = await member(t, scene, 'room_a', 600, other.uuid);
  const b = await member(t, scene, 'room_b', 1000, scene.owner);
  let established = a.waitFor('CALL_ESTABLISHED', 20_000);
  a.command('dial', NUMBER);
  await established;
  established = b.waitFor('CALL_ESTABLISHED', 20_000);
  b.command('dial', NUMBER);
  await established;
  const c = await carrier.dial(`127.0.0.1:${scene.node.sipPort}`, '+4917100003', NUMBER, 1400);
  assert.equal(c.status, 200);
  const cHeard: number[] = [];
  c.leg.endpoint.onAudio((samples) => {
    for (const sample of samples) cHeard.push(sample / 32768);
  });
  const cListen = () => Float32Array.from(cHeard);

  await hearsExactly(baresipHeard(a), [1000, 1400], [600], 'a hears b and c, not itself');
  await hearsExactly(baresipHeard(b), [600, 1400], [1000], 'b hears a and c, not itself');
  await hearsExactly(cListen, [600, 1000], [1400], 'c hears a and b, not itself');
  const members = scene.node.app.services.telephony.calls!.conferenceMembers(conference)!;
  assert.deepEqual(
    Object.values(members)
      .map(({ phone, user, moderator }) => ({ phone, user, moderator }))
      .sort((x, y) => (String(x.phone) < String(y.phone) ? -1 : 1)),
    [
      { phone: '+4917100003', user: undefined, moderator: false },
      // The owner's account calls as the owner's first number.
      { phone: NUMBER, user: scene.owner, moderator: true },
      { phone: 'room_a', user: other.uuid, moderator: false },
    ],
  );

  // A fourth caller finds the room full: the special information tone (its 1400 Hz), then the hang-up.
  const d = await member(t, scene, 'room_d', 425);
  const dClosed = d.waitFor('CALL_CLOSED', 20_000);
  d.command('dial', NUMBER);
  await hears(d, 1400, 3);
  await dClosed;
  assert.equal(
    Object.keys(scene.node.app.services.telephony.calls!.conferenceMembers(conference)!).length,
    3,
  );

  const closed = [a.waitFor('CALL_CLOSED', 20_000), b.waitFor('CALL_CLOSED', 20_000)];
  a.command('hangup');
  b.command('hangup');
  await Promise.all(closed);
  await c.leg.hangup();

  // The owner's session: start, three joins, three leaves, stop, in this order (talk updates between).
  const seen: Awaited<ReturnType<typeof newEvents>> = [];
  await until(
    async () => {
      seen.push(...(await newEvents(scene.client)));
      return names(seen).includes('recording_new');
    },
    'the room stopped and its recording stored',
    20_000,
  );
  const room = seen.filter((event) => /^conference_(start|join|leave|stop)$/.test(event.event));
  assert.deepEqual(names(room), [
    'conference_start',
    'conference_join',
    'conference_join',
    'conference_join',
    'conference_leave',
    'conference_leave',
    'conference_leave',
    'conference_stop',
  ]);
  assert.deepEqual(
    { ...room[0] },
    { ...room[0], conference, owner: scene.owner, description: 'Daily' },
    'conference_start names the room, its owner and description',
  );
  const joined = room.slice(1, 4).flatMap((event) => Object.keys(event.member as object));
  const left = room.slice(4, 7).flatMap((event) => event.member as string[]);
  assert.deepEqual([...left].sort(), [...joined].sort(), 'the members who joined left');
  const stored = seen.find((event) => event.event === 'recording_new')!;
  assert.ok(
    names(seen).indexOf('recording_new') > names(seen).indexOf('conference_stop'),
    'the recording after the stop',
  );
  assert.equal(stored.phone, conference, 'the recording names the conference');

  // One CDR per member (d was never one: its CDR is a plain call), service conference.
  const cdrs = await cdrsOf(scene.node.app, scene.owner, 4);
  const rooms = cdrs.filter((cdr) => cdr.conference_id === conference);
  assert.equal(rooms.length, 3);
  assert.ok(rooms.every((cdr) => cdr.service === 'conference'));
  assert.ok(
    cdrs.some((cdr) => cdr.service === 'call' && !cdr.conference_id),
    "d's call is no member's",
  );
});

test('a wrong PIN three times hangs up without joining; the right PIN joins, the moderator PIN joins as moderator', async (t) => {
  const scene = await setUp(t, { pin: '2468', moderator_pin: '1357' });
  // Music while alone: an announcement of the owner (through the announcements' audio path).
  const music = Float32Array.from(
    { length: 8000 * 2 },
    (_, i) => 0.25 * Math.sin((2 * Math.PI * 425 * i) / 8000),
  );
  const announcement = await uploadAnnouncement(scene.node.app, scene.client, music);
  const changed = await scene.client.call('POST', `/api/conference/${scene.conference}`, {
    music: announcement,
  });
  assert.equal(changed.status, 'ok');
  await newEvents(scene.client);
  const wrong = await member(t, scene, 'pin_wrong', 600);
  const closed = wrong.waitFor('CALL_CLOSED', 30_000);
  wrong.command('dial', NUMBER);
  const call = await engineCall(scene, 'pin_wrong');
  // The PIN is asked for with a 1000 Hz beep.
  await hears(wrong, 1000, 3);
  await press(wrong, call, '1111#');
  await press(wrong, call, '13#');
  await press(wrong, call, '24680#');
  await closed;
  assert.deepEqual(names(await newEvents(scene.client)), [], 'no room started, no one joined');
  assert.equal(scene.node.app.services.telephony.calls!.conferenceMembers(scene.conference), undefined);

  const right = await member(t, scene, 'pin_right', 1000);
  right.command('dial', NUMBER);
  const rightCall = await engineCall(scene, 'pin_right');
  await hears(right, 1000, 3);
  await press(right, rightCall, '2468#');
  await hearsExactly(baresipHeard(right), [425], [1000], 'the member alone hears the music');
  const moderator = await member(t, scene, 'pin_mod', 1400);
  moderator.command('dial', NUMBER);
  const moderatorCall = await engineCall(scene, 'pin_mod');
  await hears(moderator, 1000, 3);
  await press(moderator, moderatorCall, '1357#');
  await hearsExactly(
    baresipHeard(right),
    [1400],
    [1000, 425],
    'the member hears the moderator, no more music',
  );
  await hearsExactly(baresipHeard(moderator), [1000], [1400], 'the moderator hears the member');
  const events = await newEvents(scene.client);
  assert.deepEqual(
    names(events).filter((name) => name !== 'conference_update'),
    ['conference_start', 'conference_join', 'conference_join'],
  );
  const flags = events
    .filter((event) => event.event === 'conference_join')
    .map((event) => Object.entries(event.member as Record<string, { moderator: boolean }>)[0]!);
  assert.deepEqual(
    flags.map(([uuid, view]) => [uuid, view.moderator]),
    [
      [rightCall.uuid, false],
      [moderatorCall.uuid, true],
    ],
  );
  const hungUp = [right.waitFor('CALL_CLOSED', 20_000), moderator.waitFor('CALL_CLOSED', 20_000)];
  right.command('hangup');
  moderator.command('hangup');
  await Promise.all(hungUp);
});

test('conference-offline: conference_enable off, a locked conference and one in the trash answer with the special information tone and hang up; no room starts', async (t) => {
  const scene = await setUp(t, {});
  await newEvents(scene.client);
  const caller = await member(t, scene, 'offline_a', 600);
  const offline = async (what: string) => {
    const closed = caller.waitFor('CALL_CLOSED', 20_000);
    caller.command('dial', NUMBER);
    // The tone's 1400 Hz part (950 and 1800 Hz are not among the windows' candidates).
    await hears(caller, 1400, 3).catch((error: Error) => {
      throw new Error(`${what}: ${error.message}`);
    });
    await closed;
  };
  await scene.node.app.services.phones.setSwitches(NUMBER, { conference_enable: false });
  await offline('conference_enable off');
  await scene.node.app.services.phones.setSwitches(NUMBER, { conference_enable: true });
  assert.equal(
    (await scene.client.call('POST', `/api/conference/${scene.conference}`, { locked: true })).status,
    'ok',
  );
  await offline('locked');
  assert.equal((await scene.client.call('DELETE', `/api/conference/${scene.conference}`)).status, 'ok');
  await offline('in the trash');
  const events = names(await newEvents(scene.client));
  assert.ok(
    !events.some((name) => /^conference_(start|join)$/.test(name)),
    `no room events: ${events.join()}`,
  );
  // The three calls were answered (to be heard) and are plain calls of the owner.
  const cdrs = await cdrsOf(scene.node.app, scene.owner, 3);
  assert.deepEqual(
    cdrs.map((cdr) => [cdr.service, cdr.conference_id ?? null]),
    Array.from({ length: 3 }, () => ['call', null]),
  );
});
