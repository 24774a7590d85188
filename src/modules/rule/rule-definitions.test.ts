/**
 * The parsed-definition cache of the live engine (rule-definitions.ts): one parse per row text,
 * a new parse when any part of the text changed, bounded, filled only when asked to keep.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DefinitionCache } from './rule-definitions.js';

const row = (uuid: string, to = 'b') => ({
  uuid,
  name: 'R',
  time_zone: 'UTC',
  initial_state: 'a',
  edges: JSON.stringify([{ from: 'a', to, conditions: [], actions: [] }]),
  metadata: '{}',
});

describe('rule definition cache', () => {
  test('parsed once per text; any change of the text parses again', () => {
    const cache = new DefinitionCache(10);
    const first = cache.definition(row('r1'));
    assert.equal(cache.definition(row('r1')), first);
    const moved = cache.definition(row('r1', 'c'));
    assert.notEqual(moved, first);
    assert.equal(moved.edges[0]!.to, 'c');
    for (const change of [
      { name: 'S' },
      { time_zone: 'Europe/Berlin' },
      { initial_state: 'b' },
      { metadata: '{"x":1}' },
    ]) {
      const changed = { ...row('r1', 'c'), ...change };
      const parsed = cache.definition(changed);
      assert.notEqual(parsed, moved);
      assert.equal(cache.definition(changed), parsed);
    }
  });

  test('bounded: the least recently used entry goes first; timer looks only read', () => {
    const cache = new DefinitionCache(3);
    const kept = cache.definition(row('r1'));
    cache.definition(row('r2'));
    cache.definition(row('r3'));
    assert.equal(cache.definition(row('r1')), kept);
    cache.definition(row('r4'));
    assert.equal(cache.size, 3);
    assert.equal(cache.definition(row('r1')), kept);
    // r2 was the least recently used: gone, parsed anew.
    cache.definition(row('r2'), false);
    assert.equal(cache.size, 3);
    assert.equal(cache.definition(row('r3'), false), cache.definition(row('r3'), false));
    cache.definition(row('r5'), false);
    assert.equal(cache.size, 3);
  });

  test('bounded by the text of its entries too: a large rule pushes out older ones', () => {
    const cache = new DefinitionCache(100, 2 * row('r1').edges.length + 4);
    const kept = cache.definition(row('r1'));
    cache.definition(row('r2'));
    assert.equal(cache.size, 2);
    cache.definition(row('r3'));
    assert.equal(cache.size, 2);
    assert.notEqual(cache.definition(row('r1')), kept);
    // Larger than the whole budget: parsed, not kept, nothing else dropped.
    const huge = { ...row('r9'), metadata: JSON.stringify({ x: 'y'.repeat(1000) }) };
    assert.notEqual(cache.definition(huge), cache.definition(huge));
    assert.equal(cache.size, 2);
  });
});
