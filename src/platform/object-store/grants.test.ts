import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { derive, effectiveLevels, grantOf, Level, type TagOnObject } from './grants.js';

function tag(
  uuid: string,
  owner: string,
  attacher: string,
  grants: Record<string, number>,
  options: { name?: string; foreignUse?: boolean } = {},
): TagOnObject {
  const foreignUse = options.foreignUse ?? false;
  const policy = new Map<string, { level: number; grant: number }>([
    [owner, { level: Level.owner, grant: grantOf(owner, owner, Level.owner, foreignUse) }],
  ]);
  for (const [user, level] of Object.entries(grants)) {
    policy.set(user, { level, grant: grantOf(user, owner, level, foreignUse) });
  }
  return { tag: uuid, attacher, tagOwner: owner, name: options.name ?? null, foreignUse, policy };
}

describe('access derivation', () => {
  test('the owner has 4; a share tag of the owner grants its levels', () => {
    const d = derive('a', [
      tag('all', 'a', 'a', {}, { name: 'tag_all' }),
      tag('sr', 'a', 'a', { b: 1, c: 2 }),
    ]);
    assert.deepEqual(Object.fromEntries(d.levels), { a: 4, b: 1, c: 2 });
    assert.deepEqual(d.dropped, []);
  });

  test("a tag's own owner gains nothing from it unless it is open to foreign use", () => {
    // b (read only) puts a personal tag on a's object: b stays at read.
    const d = derive('a', [tag('sr', 'a', 'a', { b: 1 }), tag('unread', 'b', 'b', {})]);
    assert.equal(d.levels.get('b'), 1);
    assert.deepEqual(d.dropped, []);
  });

  test('sharing further needs propagate; a reader cannot pass the object on', () => {
    const d = derive('a', [tag('sr', 'a', 'a', { b: 1 }), tag('b-share', 'b', 'b', { c: 1 })]);
    assert.equal(d.levels.get('c'), undefined);
    assert.deepEqual(d.dropped, ['b-share']);
    const ok = derive('a', [tag('sp', 'a', 'a', { b: 3 }), tag('b-share', 'b', 'b', { c: 2 })]);
    assert.equal(ok.levels.get('c'), 2);
  });

  test('losing access removes what was derived from it, also around a cycle', () => {
    // b and c shared the object with each other; a's grant to b is gone.
    const d = derive('a', [tag('b-sp', 'b', 'b', { c: 3 }), tag('c-sp', 'c', 'c', { b: 3 })]);
    assert.deepEqual(Object.fromEntries(d.levels), { a: 4 });
    assert.deepEqual(d.dropped.sort(), ['b-sp', 'c-sp']);
  });

  test('a foreign-use tag lets writers of the tag share their own objects with its owner', () => {
    const folder = tag('folder', 'a', 'b', { b: 2, c: 1 }, { foreignUse: true });
    const d = derive('b', [folder]);
    assert.equal(d.levels.get('a'), 3);
    assert.equal(d.levels.get('c'), 1);
    const noForeign = derive('b', [tag('folder', 'a', 'b', { b: 2 })]);
    assert.deepEqual(noForeign.dropped, ['folder']);
  });

  test("another user's tag_all or tag_trash never stays on an object", () => {
    const d = derive('a', [
      tag('all-b', 'b', 'b', {}, { name: 'tag_all' }),
      tag('all-a', 'a', 'a', {}, { name: 'tag_all' }),
    ]);
    assert.deepEqual(d.dropped, ['all-b']);
  });

  test('in the trash only the owner has access', () => {
    const d = derive('a', [tag('sr', 'a', 'a', { b: 1 })]);
    assert.deepEqual(Object.fromEntries(effectiveLevels(d, 'a', true)), { a: 4 });
    assert.deepEqual(Object.fromEntries(effectiveLevels(d, 'a', false)), { a: 4, b: 1 });
  });
});
