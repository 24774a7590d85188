/** Conventions 7: version 1 UUIDs, unique and in time order, from the process's own generator. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isUuidV1, newUuid, uuidSortKey, uuidTime } from './ids.js';

test('UUIDs made faster than the clock ticks are unique, version 1, RFC variant and in time order', () => {
  const before = Math.floor(Date.now() / 1000);
  const made = Array.from({ length: 50_000 }, () => newUuid());
  const after = Math.floor(Date.now() / 1000);
  assert.equal(new Set(made).size, made.length);
  for (const uuid of made) {
    assert.ok(isUuidV1(uuid), uuid);
    assert.match(uuid[19]!, /[89ab]/, 'the RFC variant');
  }
  // Many share a millisecond: the 100 ns counter keeps their order strict.
  for (let i = 1; i < made.length; i++) assert.ok(uuidSortKey(made[i - 1]!) < uuidSortKey(made[i]!), made[i]);
  assert.ok(uuidTime(made[0]!) >= before && uuidTime(made.at(-1)!) <= after);
  // One node and clock sequence for the process while the clock runs forward.
  assert.equal(new Set(made.map((uuid) => uuid.slice(19))).size, 1);
  assert.equal(Number.parseInt(made[0]!.slice(24, 26), 16) & 0x01, 1, 'the multicast bit of a random node');
});
