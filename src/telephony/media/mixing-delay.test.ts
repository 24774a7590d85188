import assert from 'node:assert/strict';
import { test } from 'node:test';
import { delayQuantile, MAX_DELAY_MS, MixingDelays } from './mixing-delay.js';

test('the mixing delay histogram gives quantiles at bucket edges and starts afresh when taken', () => {
  const delays = new MixingDelays();
  for (let i = 0; i < 98; i++) delays.record(3.1);
  delays.record(17.6);
  delays.record(250);
  const counts = delays.take();
  assert.equal(delayQuantile(counts, 0.5), 3.25);
  assert.equal(delayQuantile(counts, 0.99), 17.75);
  // Beyond the histogram: counted in the last bucket, read as MAX_DELAY_MS.
  assert.equal(delayQuantile(counts, 1), MAX_DELAY_MS);
  assert.equal(
    counts.reduce((a, b) => a + b, 0),
    100,
  );
  assert.equal(delayQuantile(delays.take(), 0.5), undefined);
});
