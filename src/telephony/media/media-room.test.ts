import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MediaEndpoint } from './media-endpoint.js';
import type { MediaEngine } from './media-engine.js';
import { MediaRoom } from './media-room.js';
import { LATE_WAIT_MS, STEADY_MS } from './room-phase.js';
import { FRAME_SAMPLES } from './sources.js';

/** An endpoint as the room sees it: what its peer sends goes in by `send`, the room's sends are counted. */
function member() {
  let listener: ((samples: Int16Array) => void) | undefined;
  const state = { sends: 0 };
  const endpoint = {
    isClosed: false,
    onAudio(on: (samples: Int16Array) => void) {
      listener = on;
      return () => {
        listener = undefined;
      };
    },
    play: () => new Promise(() => {}),
    stop() {},
    tick() {
      state.sends++;
    },
  } as unknown as MediaEndpoint;
  return { endpoint, state, send: () => listener?.(new Int16Array(FRAME_SAMPLES).fill(500)) };
}

const engine = { lend: () => () => {} } as unknown as MediaEngine;

test("a room waiting for a steady member's late frame mixes on its arrival, not at the deadline", (t) => {
  const delays: number[] = [];
  // The room's time is the test's: no wait of a loaded machine between two lines moves it.
  let time = 1000;
  const room = new MediaRoom(engine, { delay: (ms) => delays.push(ms) }, () => time);
  t.after(() => room.close());
  const a = member();
  const b = member();
  room.join(1, a.endpoint);
  room.join(2, b.endpoint);
  // All in one turn of the event loop: the room's own 20 ms clock cannot tick in between.
  a.send();
  b.send();
  room.tick();
  assert.equal(a.state.sends, 1, 'both frames in: mixed and sent at the tick');
  // b's next frame is in on time; a's is due (steady, last frame 17 ms ago) but not in yet.
  time = 1017;
  b.send();
  room.tick();
  assert.equal(a.state.sends, 1, "the room waits for a's frame");
  time = 1018;
  a.send();
  assert.equal(a.state.sends, 2, 'the late frame arrived: mixed at once');
  assert.equal(b.state.sends, 2);
  // Both went into the mix at a's arrival: a's frame waited less than b's, which came first.
  assert.deepEqual(delays.slice(-2), [0, 1]);
});

test('a frame that does not come is given up at the deadline; a member who is not steady is not waited for', async (t) => {
  let time = 1000;
  const room = new MediaRoom(engine, {}, () => time);
  t.after(() => room.close());
  const a = member();
  room.join(1, a.endpoint);
  a.send();
  room.tick();
  time = 1017;
  room.tick();
  assert.equal(a.state.sends, 1, 'waiting for the frame due');
  await sleep(LATE_WAIT_MS + 2);
  assert.ok(a.state.sends >= 2, 'mixed without it at the deadline');
  // Now a's last frame is more than STEADY_MS old: the tick mixes at once, in the same turn.
  time = 1000 + STEADY_MS + 10;
  const before = a.state.sends;
  room.tick();
  assert.ok(a.state.sends > before, 'mixed at the tick, not waited');
});
