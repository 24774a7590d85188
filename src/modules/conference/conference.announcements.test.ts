/**
 * Enter and leave announcements of a room (docs/decisions.md "Conferences: calls into rooms"):
 * with real phones dialling a conference's number, a member already in the room hears the
 * conference's `announcement_enter` when a second member joins and its `announcement_leave`
 * when that one leaves (uploaded announcements, each a tone of its own, found by Goertzel power
 * in what the member heard after each step); a conference without them plays the short tones
 * (880 Hz on entering, 440 Hz on leaving).
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import * as calls from '../../../test/calls.js';
import { loggedInClient, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import { goertzelPower } from '../../telephony/media/index.js';

requireTelephonyPackages();

type Peer = Awaited<ReturnType<typeof calls.phone>>;
type Scene = Awaited<ReturnType<typeof scene>>;

/** A window of 60 ms: 1800 and 2200 Hz, 880 and 440 Hz and the members' 600 and 1000 Hz fall in bins of their own. */
const WINDOW = 480;
/** A tone at amplitude 0.15 in a whole window gives about 0.0056; nothing of it is far below. */
const PRESENT = 0.002;

/** The decoded samples the phone heard so far (8 kHz). */
function heardSamples(peer: Peer): Float32Array {
  const audio = calls.soundSoFar(peer);
  return audio && audio.sampleRate === 8000 ? audio.samples : new Float32Array(0);
}

/** The most power of `hz` in a 60 ms window of what the phone heard from sample `from` on. */
function peak(peer: Peer, hz: number, from = 0): number {
  const samples = heardSamples(peer);
  let most = 0;
  for (let at = from; at + WINDOW <= samples.length; at += WINDOW / 2)
    most = Math.max(most, goertzelPower(samples.subarray(at, at + WINDOW), 8000, hz));
  return most;
}

/** A sine of `hz` for `seconds` at amplitude 0.25, as an announcement's audio. */
function sine(hz: number, seconds: number): Float32Array {
  return Float32Array.from(
    { length: 8000 * seconds },
    (_, i) => 0.25 * Math.sin((2 * Math.PI * hz * i) / 8000),
  );
}

async function scene(t: TestContext) {
  const node = await calls.telephonyNode(t);
  const { client, user } = await loggedInClient(node.app);
  await node.app.services.features.updatePack('default', { quota: { calls: 10 } });
  return { node, client, owner: user.uuid };
}

/** A conference of the owner on `number` with `settings`. */
async function conference(
  { node, client, owner }: Scene,
  number: string,
  settings: Record<string, unknown>,
): Promise<string> {
  await node.app.services.phones.addNumber(number, { userUuid: owner });
  const created = await client.call('POST', '/api/conference', { phone: [number], ...settings });
  assert.equal(created.status, 'ok');
  return created.uuid as string;
}

/**
 * a enters the room alone; b joins, then leaves. What a heard after b's dial and after b's
 * hang-up is measured for `enter` and `leave`: each is heard in its step and not before it.
 */
async function enterThenLeave(
  t: TestContext,
  { node }: Scene,
  number: string,
  uuid: string,
  names: [string, string],
  enter: number,
  leave: number,
) {
  const a = await calls.phone(t, node, await calls.sipAccount(node.app, names[0]), {
    microphone: calls.tone(600, 60),
  });
  const b = await calls.phone(t, node, await calls.sipAccount(node.app, names[1]), {
    microphone: calls.tone(1000, 60),
  });
  const members = () => Object.keys(node.app.services.telephony.calls!.conferenceMembers(uuid) ?? {}).length;
  let established = a.waitFor('CALL_ESTABLISHED', 20_000);
  a.command('dial', number);
  await established;
  await until(() => members() === 1 && heardSamples(a).length > 8000, 'a alone in the room for a second');
  // a alone heard neither announcement (its own entry plays to a room of one: b's is what is asked).
  const beforeJoin = heardSamples(a).length;
  assert.ok(peak(a, leave) < PRESENT, 'no leave announcement before anyone left');

  established = b.waitFor('CALL_ESTABLISHED', 20_000);
  b.command('dial', number);
  await established;
  await until(() => members() === 2, 'b joined');
  await until(() => peak(a, 1000, beforeJoin) > 0.003, 'a hears b');
  await until(() => peak(a, enter, beforeJoin) > PRESENT, `a hears the enter announcement (${enter} Hz)`);
  assert.ok(peak(a, leave, beforeJoin) < PRESENT, 'no leave announcement on entering');

  const beforeLeave = heardSamples(a).length;
  const closed = b.waitFor('CALL_CLOSED', 20_000);
  b.command('hangup');
  await closed;
  await until(() => members() === 1, 'b left');
  await until(() => peak(a, leave, beforeLeave) > PRESENT, `a hears the leave announcement (${leave} Hz)`);
  const leftAt = heardSamples(a).length;
  await until(() => heardSamples(a).length > leftAt + 4000, 'half a second more heard');
  assert.ok(peak(a, 1000, leftAt) < 0.0003, 'b is no longer heard');

  const gone = a.waitFor('CALL_CLOSED', 20_000);
  a.command('hangup');
  await gone;
}

test("a member in the room hears the conference's enter announcement when another joins and its leave announcement when it leaves", async (t) => {
  const s = await scene(t);
  const enter = await calls.uploadAnnouncement(s.node.app, s.client, sine(1800, 1));
  const leave = await calls.uploadAnnouncement(s.node.app, s.client, sine(2200, 1));
  const uuid = await conference(s, '+4930555430', { announcement_enter: enter, announcement_leave: leave });
  await enterThenLeave(t, s, '+4930555430', uuid, ['ann_a', 'ann_b'], 1800, 2200);
});

test('a conference without announcements plays the short tones: 880 Hz on entering, 440 Hz on leaving', async (t) => {
  const s = await scene(t);
  const uuid = await conference(s, '+4930555431', {});
  await enterThenLeave(t, s, '+4930555431', uuid, ['tone_a', 'tone_b'], 880, 440);
});
