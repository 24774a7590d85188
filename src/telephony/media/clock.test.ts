import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FRAME_MS, MediaClock } from './clock.js';

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

test('a clock aligned from its own ticks keeps one timer, and ticks at the phase asked', async () => {
  const before = timers();
  const clock = new MediaClock();
  let ticks = 0;
  let phase = 0;
  const member = {
    tick: () => {
      ticks++;
      // A conference room moves its clock from a tick (media-room.ts): each move must replace
      // the pending timer, not add a second chain of them.
      phase = (ticks * 7) % FRAME_MS;
      clock.align(phase);
    },
  };
  clock.add(member);
  await sleep(400);
  assert.equal(timers() - before, 1);
  assert.ok(ticks >= 8, `${ticks} ticks`);
  assert.ok(Math.abs(clock.phase! - phase) < 1e-6, `${clock.phase} ≠ ${phase}`);
  clock.remove(member);
  assert.equal(timers(), before);
  // Aligned while idle between ticks (from another timer), it moves its one timer too.
  clock.add(member);
  clock.align(3);
  assert.equal(timers() - before, 1);
  assert.ok(Math.abs(clock.phase! - 3) < 1e-6);
  clock.remove(member);
});
