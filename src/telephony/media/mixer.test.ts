import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeG711, encodeG711 } from './g711.js';
import { goertzelPower } from './goertzel.js';
import {
  HANGOVER_FRAMES,
  HANGUNDER_FRAMES,
  Mixer,
  REALIGN_WINDOW_FRAMES,
  TALK_REPORT_FRAMES,
  TRIM_WINDOW_FRAMES,
  volumeFactor,
} from './mixer.js';
import { FRAME_SAMPLES, ToneSource } from './sources.js';

const constant = (value: number) => new Int16Array(FRAME_SAMPLES).fill(value);

/** Feeds each member its frame and mixes `frames` times. */
function run(mixer: Mixer, inputs: Map<number, Int16Array>, frames: number): void {
  for (let i = 0; i < frames; i++) {
    for (const [id, samples] of inputs) mixer.push(id, samples);
    mixer.mix();
  }
}

test('N−1: each member hears the sum of the others and not itself', () => {
  const mixer = new Mixer();
  for (const id of [1, 2, 3, 4]) mixer.add(id);
  const inputs = new Map([
    [1, constant(1000)],
    [2, constant(2000)],
    [3, constant(4000)],
    [4, constant(0)],
  ]);
  run(mixer, inputs, HANGUNDER_FRAMES + 1);
  assert.equal(mixer.output(1)![0], 6000);
  assert.equal(mixer.output(2)![0], 5000);
  assert.equal(mixer.output(3)![0], 3000);
  // Member 4 is silent (not talking): it hears the whole room, the shared frame.
  assert.equal(mixer.output(4)![0], 7000);
  assert.equal(mixer.room[0], 7000);
});

test('volume steps scale by the factors of the notes, in and out', () => {
  assert.deepEqual(
    [-4, -3, -2, -1, 0, 1, 2, 3, 4].map(volumeFactor),
    [0.2, 0.4, 0.6, 0.8, 1, 1.3, 2.3, 3.3, 4.3],
  );
  const mixer = new Mixer();
  mixer.add(1, { mute: false, deaf: false, volumeIn: 2, volumeOut: 0 });
  mixer.add(2, { mute: false, deaf: false, volumeIn: 0, volumeOut: -2 });
  mixer.add(3);
  const inputs = new Map([
    [1, constant(1000)],
    [2, constant(0)],
    [3, constant(0)],
  ]);
  run(mixer, inputs, HANGUNDER_FRAMES + 1);
  assert.equal(mixer.output(3)![0], 2300);
  assert.equal(mixer.output(2)![0], Math.round(2300 * 0.6));
  mixer.update(1, { volumeIn: -2 });
  run(mixer, inputs, 1);
  assert.equal(mixer.output(3)![0], 600);
});

test('sums beyond 16 bits clip, both for the room and after volume_out', () => {
  const mixer = new Mixer();
  mixer.add(1);
  mixer.add(2);
  mixer.add(3, { mute: false, deaf: false, volumeIn: 0, volumeOut: 4 });
  const inputs = new Map([
    [1, constant(30000)],
    [2, constant(20000)],
    [3, constant(-1000)],
  ]);
  run(mixer, inputs, HANGUNDER_FRAMES + 1);
  assert.equal(mixer.room[0], 32767);
  assert.equal(mixer.output(3)![0], 32767);
  assert.equal(mixer.output(1)![0], 19000);
  run(
    mixer,
    new Map([
      [1, constant(-30000)],
      [2, constant(-20000)],
      [3, constant(0)],
    ]),
    1,
  );
  assert.equal(mixer.room[0], -32768);
});

test('mute keeps a member from everyone, deaf keeps the room from a member', () => {
  const mixer = new Mixer();
  for (const id of [1, 2, 3]) mixer.add(id);
  const inputs = new Map([
    [1, constant(1000)],
    [2, constant(2000)],
    [3, constant(4000)],
  ]);
  run(mixer, inputs, HANGUNDER_FRAMES + 1);
  mixer.update(1, { mute: true });
  mixer.update(2, { deaf: true });
  run(mixer, inputs, 1);
  assert.equal(mixer.output(3)![0], 2000);
  assert.equal(mixer.output(1)![0], 6000);
  assert.ok(mixer.output(2)!.every((sample) => sample === 0));
  // Deaf is not mute: member 2 still reaches the others.
  mixer.update(1, { mute: false });
  run(mixer, inputs, 1);
  assert.equal(mixer.output(3)![0], 3000);
});

test('talk starts after the hangunder, ends after the hangover, reported at most every 200 ms; the floor goes to the loudest', () => {
  const talk: [number, boolean][] = [];
  const floor: (number | null)[] = [];
  const mixer = new Mixer({ talk: (id, on) => talk.push([id, on]), floor: (id) => floor.push(id) });
  mixer.add(1);
  mixer.add(2);
  const loud = new Map([
    [1, constant(3000)],
    [2, constant(0)],
  ]);
  run(mixer, loud, HANGUNDER_FRAMES - 1);
  assert.equal(mixer.talking(1), false);
  // Not yet talking: member 1 is not in the mix.
  assert.equal(mixer.output(2)![0], 0);
  run(mixer, loud, 1);
  assert.equal(mixer.talking(1), true);
  assert.deepEqual(talk, [[1, true]]);
  assert.deepEqual(floor, [1]);
  const quiet = new Map([
    [1, constant(0)],
    [2, constant(0)],
  ]);
  // The smoothed energy (0.2 old, 0.8 new) falls 3000 → 600 → 120 → 24: quiet counts from the
  // third frame, and the hangover ends talk HANGOVER_FRAMES later.
  run(mixer, quiet, 2 + HANGOVER_FRAMES - 1);
  assert.equal(mixer.talking(1), true);
  run(mixer, quiet, 1);
  assert.equal(mixer.talking(1), false);
  assert.deepEqual(talk, [
    [1, true],
    [1, false],
  ]);
  assert.deepEqual(floor, [1, null]);
  // A blip of talk shorter than the report interval is reported once it is due.
  run(mixer, loud, HANGUNDER_FRAMES);
  const before = talk.length;
  run(mixer, quiet, HANGOVER_FRAMES);
  assert.equal(talk.length, before + 1);
  assert.ok(HANGOVER_FRAMES >= TALK_REPORT_FRAMES);
  // Two talkers: the louder one takes the floor.
  run(
    mixer,
    new Map([
      [1, constant(500)],
      [2, constant(8000)],
    ]),
    HANGUNDER_FRAMES + 1,
  );
  assert.equal(mixer.floor, 2);
});

test('a tone survives the mix and G.711 coding in both laws: the others hear it, its sender does not', () => {
  for (const law of [0, 8] as const) {
    const mixer = new Mixer();
    for (const id of [1, 2, 3]) mixer.add(id);
    const tones = new Map([
      [1, new ToneSource(600)],
      [2, new ToneSource(900)],
      [3, new ToneSource(1400)],
    ]);
    const heard = new Map([1, 2, 3].map((id) => [id, new Int16Array(FRAME_SAMPLES * 20)]));
    const coded = new Uint8Array(FRAME_SAMPLES);
    const frame = new Int16Array(FRAME_SAMPLES);
    for (let f = 0; f < 30; f++) {
      for (const [id, tone] of tones) {
        tone.read(frame);
        encodeG711(frame, law, coded);
        decodeG711(coded, law, frame);
        mixer.push(id, frame);
      }
      mixer.mix();
      if (f >= 10) for (const [id, out] of heard) out.set(mixer.output(id)!, (f - 10) * FRAME_SAMPLES);
    }
    for (const [id, samples] of heard) {
      const power = (hz: number) => goertzelPower(samples, 8000, hz);
      const own = { 1: 600, 2: 900, 3: 1400 }[id]!;
      for (const hz of [600, 900, 1400]) {
        if (hz === own) assert.ok(power(hz) < 1e3, `law ${law}: member ${id} hears itself`);
        else assert.ok(power(hz) > 1e6, `law ${law}: member ${id} misses ${hz} Hz`);
      }
    }
  }
});

test('members who add nothing share one encoded frame per law; a talker gets none (its endpoint encodes its N−1 mix)', () => {
  const mixer = new Mixer();
  for (const id of [1, 2, 3]) mixer.add(id);
  run(
    mixer,
    new Map([
      [1, constant(3000)],
      [2, constant(0)],
      [3, constant(0)],
    ]),
    HANGUNDER_FRAMES + 1,
  );
  const mu = mixer.encoded(2, 0)!;
  assert.equal(mixer.encoded(3, 0), mu);
  const expected = new Uint8Array(FRAME_SAMPLES);
  encodeG711(constant(3000), 0, expected);
  assert.deepEqual(mu, expected);
  const a = mixer.encoded(2, 8)!;
  assert.notEqual(a, mu);
  assert.equal(mixer.encoded(3, 8), a);
  assert.equal(mixer.encoded(1, 0), undefined);
  mixer.update(3, { volumeOut: 1 });
  run(mixer, new Map([[1, constant(3000)]]), 1);
  assert.notEqual(mixer.encoded(3, 0), mixer.encoded(2, 0));
});

/** Member 1 talks, member 2 listens; frame k of member 1 is the constant 200 + k, so `heard` says which frame each mix took. */
function numberedFrames() {
  const mixer = new Mixer();
  mixer.add(1);
  mixer.add(2);
  const frame = (k: number) => constant(200 + k);
  const heard: number[] = [];
  const mix = () => {
    mixer.mix();
    heard.push(mixer.output(2)![0]! - 200);
  };
  return { mixer, frame, heard, mix };
}

test("a frame that stood in a member's queue for a whole window is dropped (its delay goes); a one-off late frame goes, frames that come in bunches stay", () => {
  const { mixer, frame, heard, mix } = numberedFrames();
  // Start-up left one frame more than the mix takes: every frame is heard one mix late.
  mixer.push(1, frame(0));
  let k = 1;
  for (; k <= TRIM_WINDOW_FRAMES; k++) {
    mixer.push(1, frame(k));
    mix();
  }
  // Talking from the hangunder on; until the window's end each mix took the frame before the newest.
  const lags = heard.map((value, i) => i + 1 - value);
  assert.deepEqual(new Set(lags.slice(HANGUNDER_FRAMES, TRIM_WINDOW_FRAMES - 1)), new Set([1]));
  // The window's end dropped the frame that stood: from then on the newest frame is heard at once.
  const from = heard.length;
  for (; k <= TRIM_WINDOW_FRAMES * 2; k++) {
    mixer.push(1, frame(k));
    mix();
  }
  assert.deepEqual(
    heard.slice(from),
    Array.from({ length: TRIM_WINDOW_FRAMES }, (_, i) => TRIM_WINDOW_FRAMES + 1 + i),
  );

  // Jitter, once: a frame comes after its mix, with the next one. The mix went without it, and
  // the next mix drops it: the frame after is heard at once, no frame stands behind.
  let start = heard.length;
  const late = Math.floor(TRIM_WINDOW_FRAMES / 2);
  let lateFrame = 0;
  for (let tick = 0; tick < TRIM_WINDOW_FRAMES; tick++) {
    if (tick === late + 1) mixer.push(1, frame(lateFrame));
    if (tick === late) lateFrame = k++;
    else mixer.push(1, frame(k++));
    mix();
  }
  let spoken = heard.slice(start);
  assert.equal(spoken[late], -200, 'the mix without the late frame: silence');
  assert.ok(!spoken.includes(lateFrame), 'the late frame was dropped');
  assert.deepEqual(
    spoken.slice(late + 1),
    Array.from({ length: TRIM_WINDOW_FRAMES - late - 1 }, (_, i) => lateFrame + 1 + i),
  );

  // Frames in bunches of two every other mix: after the first bunch, the queue keeps a frame (the
  // member's jitter buffer) and every frame is heard, in order (dropping each late one would lose half).
  start = heard.length;
  for (let tick = 0; tick < TRIM_WINDOW_FRAMES * 2; tick++) {
    if (tick % 2 === 1) {
      mixer.push(1, frame(k++));
      mixer.push(1, frame(k++));
    }
    mix();
  }
  spoken = heard.slice(start).filter((value) => value > 0);
  assert.deepEqual(
    spoken,
    Array.from({ length: spoken.length }, (_, i) => spoken[0]! + i),
  );
  assert.ok(spoken.length >= TRIM_WINDOW_FRAMES * 2 - 3, String(spoken));
});

test('after the room clock moved, a frame the move left standing is dropped within REALIGN_WINDOW_FRAMES', () => {
  const { mixer, frame, heard, mix } = numberedFrames();
  // Steady: each frame arrives just before the mix and is heard at once (past the hangunder).
  let k = 1;
  for (; k <= 20; k++) {
    mixer.push(1, frame(k));
    mix();
  }
  assert.equal(heard.at(-1), 20);
  // The clock moved later: one frame period held two arrivals, so one frame stands from now on.
  mixer.realigned();
  mixer.push(1, frame(k++));
  mixer.push(1, frame(k++));
  mix();
  assert.equal(heard.at(-1), 21);
  for (let i = 0; i < REALIGN_WINDOW_FRAMES; i++) {
    mixer.push(1, frame(k++));
    mix();
  }
  // The shortened window ended with a frame standing throughout: it was dropped, so the
  // newest frame is heard at once again (without realigned(), a whole second late).
  mixer.push(1, frame(k));
  mix();
  assert.equal(heard.at(-1), k);
});

test("each frame's mixing delay runs from the arrival of the packet that completed it to its mix", () => {
  const delays: number[] = [];
  const behind: boolean[] = [];
  const mixer = new Mixer({
    delay: (ms, wasBehind) => {
      delays.push(ms);
      behind.push(wasBehind);
    },
  });
  mixer.add(1);
  const half = constant(100).subarray(0, FRAME_SAMPLES / 2);
  // Two 10 ms packets make one frame: its delay counts from the second.
  mixer.push(1, half, 0);
  mixer.push(1, half, 10);
  mixer.mix(15);
  assert.deepEqual(delays, [5]);
  // Two frames queued: the second waits a frame longer.
  mixer.push(1, constant(100), 20);
  mixer.push(1, constant(100), 22);
  mixer.mix(25);
  mixer.mix(45);
  assert.deepEqual(delays.slice(1), [5, 23]);
  // The second was in before the mix at 25 and waited behind the first.
  assert.deepEqual(behind.slice(0, 3), [false, false, true]);
  // Six frames overflow the queue (four frames): the two oldest go, and the frame mixed is the third (102).
  for (let i = 0; i < 6; i++) mixer.push(1, constant(100), 100 + i);
  mixer.mix(110);
  assert.deepEqual(delays.slice(3), [8]);
  // Nothing queued: nothing counted.
  for (let i = 0; i < 4; i++) mixer.mix(130 + i * 20);
  assert.equal(delays.length, 7);
});
