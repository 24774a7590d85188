import assert from 'node:assert/strict';
import { test } from 'node:test';
import { delayQuantile, MAX_DELAY_MS, MixingDelays } from './mixing-delay.js';

test('the mixing delay histogram gives quantiles at bucket edges and starts afresh when taken', () => {
  const delays = new MixingDelays();
  for (let i = 0; i < 98; i++) delays.record(3.1);
  delays.record(17.6, true);
  delays.record(250, true);
  for (let i = 0; i < 9; i++) delays.recordLateness(0.3);
  delays.recordLateness(6);
  delays.recordMix(0.25);
  delays.recordMix(0.5);
  const figures = delays.take();
  assert.equal(figures.mixMs, 0.75);
  const counts = figures.delays;
  assert.equal(delayQuantile(counts, 0.5), 3.25);
  assert.equal(delayQuantile(counts, 0.99), 17.75);
  // Beyond the histogram: counted in the last bucket, read as MAX_DELAY_MS.
  assert.equal(delayQuantile(counts, 1), MAX_DELAY_MS);
  assert.equal(
    counts.reduce((a, b) => a + b, 0),
    100,
  );
  assert.equal(figures.behind, 2);
  assert.equal(delayQuantile(figures.lateness, 0.9), 0.5);
  assert.equal(delayQuantile(figures.lateness, 1), 6.25);
  const again = delays.take();
  assert.equal(delayQuantile(again.delays, 0.5), undefined);
  assert.equal(again.behind, 0);
  assert.equal(again.mixMs, 0);
  assert.equal(delayQuantile(again.lateness, 0.5), undefined);
});
