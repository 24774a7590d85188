/**
 * The call API's play of text (text-to-speech; docs/decisions.md "Call control: media
 * commands") with real phones: a click-to-dial call between the user's baresip (600 Hz) and a
 * far baresip (1000 Hz). The user's phone hears speech instead of the far phone for about as
 * long as the text takes to say, then the far phone again; a looped text goes on until stop.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clickToDial, heardSoFar, hears, telephonyNode, windowsOf } from '../../../test/calls.js';
import { until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

const TEXT = 'Guten Tag. Dies ist eine Ansage von Zentrale. Bitte bleiben Sie am Apparat.';
/** heardSoFar's windows are 30 ms long. */
const WINDOW_MS = 30;

/** Windows with sound (heardSoFar keeps only those) that are not the far phone's 1000 Hz: speech. */
function speechWindows(windows: { frequency: number; share: number }[]): number {
  return windows.filter((w) => !(w.frequency === 1000 && w.share > 0.7)).length;
}

test('play of text: the phone hears the speech for its length, looped until stop', async (t) => {
  const node = await telephonyNode(t);
  const { client, own, far, uuid, connect } = await clickToDial(t, node);
  const steer = (body: Record<string, unknown>) => client.call('POST', `/api/call/${uuid}/control`, body);
  // Ringing: Zentrale has no media of the call yet, and nothing is spoken.
  assert.equal((await steer({ command: 'play', text: TEXT })).status, 'illegal-state');
  await connect();
  await hears(own, 1000, 20);

  // Bad input, each with its status; none of it plays (the far phone stays heard, no speech).
  const before = speechWindows(heardSoFar(own));
  for (const [body, status] of [
    [{ command: 'play', text: '' }, 'wrong-syntax'],
    [{ command: 'play', text: 'zwei\nZeilen' }, 'wrong-syntax'],
    [{ command: 'play', text: 'Hallo', locale: 'xx-XX' }, 'wrong-syntax'],
    [{ command: 'play', text: 'Hallo', tone: { frequency: 1400 } }, 'wrong-syntax'],
    [{ command: 'play', text: 'Hallo', announcement: uuid }, 'wrong-syntax'],
    [{ command: 'play', text: 'x'.repeat(5001) }, 'too-large'],
    [{ command: 'play', locale: 'en-GB' }, 'missing-element'],
  ] as const)
    assert.equal((await steer(body)).status, status, JSON.stringify(body).slice(0, 80));
  await hears(own, 1000, windowsOf(heardSoFar(own), 1000) + 30);
  assert.ok(speechWindows(heardSoFar(own)) <= before + 3, 'bad input played nothing');

  // What the text takes to say, in windows, as the platform's speech engine speaks it.
  const spoken = await node.app.services.content.speakForCalls(TEXT, 'de-DE');
  const expected = spoken.length / 8 / WINDOW_MS;
  assert.ok(expected > 50, `the text takes ${expected} windows`);

  // Once: speech instead of the far phone, for about its length; then the far phone again.
  const start = speechWindows(heardSoFar(own));
  assert.deepEqual(await steer({ command: 'play', text: TEXT, locale: 'de-DE' }), { status: 'ok' });
  await until(
    () => speechWindows(heardSoFar(own)) >= start + expected * 0.4,
    'the speech heard',
    30_000,
    100,
  );
  const carol = windowsOf(heardSoFar(own), 1000);
  await hears(own, 1000, carol + 30, 30_000);
  const once = speechWindows(heardSoFar(own)) - start;
  // Pauses between words are silent windows (not counted); a few windows of noise at the edges.
  assert.ok(once >= expected * 0.4 && once <= expected + 10, `speech in ${once} of ${expected} windows`);

  // Looped: the speech goes on past its length, until stop; then the far phone again.
  const loopStart = speechWindows(heardSoFar(own));
  assert.deepEqual(await steer({ command: 'play', text: TEXT, loop: true }), { status: 'ok' });
  await until(
    () => speechWindows(heardSoFar(own)) >= loopStart + once * 1.5,
    'the speech heard more than once',
    60_000,
    100,
  );
  assert.deepEqual(await steer({ command: 'stop' }), { status: 'ok' });
  const stopped = speechWindows(heardSoFar(own));
  await hears(own, 1000, windowsOf(heardSoFar(own), 1000) + 30);
  // A few windows may have been under way when stop arrived; the speech did not go on.
  assert.ok(speechWindows(heardSoFar(own)) <= stopped + 5, 'the looped speech ended with stop');

  const closed = [own.waitFor('CALL_CLOSED', 20_000), far.waitFor('CALL_CLOSED', 20_000)];
  assert.deepEqual(await steer({ command: 'hangup' }), { status: 'ok' });
  await Promise.all(closed);
});
