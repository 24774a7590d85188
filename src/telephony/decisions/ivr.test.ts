import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkIvr, type Ivr, ivrReferences, walkIvr } from './ivr.js';

const A = '11111111-0b7e-11ef-8a1b-0242ac120002';
const B = '22222222-0b7e-11ef-8a1b-0242ac120002';
const GONE = '33333333-0b7e-11ef-8a1b-0242ac120002';
const ANN_A = 'aaaaaaaa-0b7e-11ef-8a1b-0242ac120002';
const ANN_B = 'bbbbbbbb-0b7e-11ef-8a1b-0242ac120002';
const ANN_T = 'cccccccc-0b7e-11ef-8a1b-0242ac120002';

const menu: Ivr = {
  description: 'main',
  announcement: ANN_A,
  '1': B,
  '2': '+4930123',
  '9': GONE,
  other: 'repeat',
  timeout: { seconds: 5, action: 'call', phone: '+4930999' },
};
const sub: Ivr = {
  description: 'sub',
  announcement: ANN_B,
  '0': A,
  timeout: { seconds: 5, action: 'play', announcement: ANN_T },
};
const ivrs = new Map([
  [A, menu],
  [B, sub],
]);

describe('IVR checks', () => {
  test('at least one key', () => {
    assert.deepEqual(checkIvr({ description: 'x', announcement: ANN_A }), {
      status: 'missing-element',
      message: 'missing 0-9, * or # (at least one key)',
    });
    assert.equal(checkIvr({ description: 'x', announcement: ANN_A, '#': '+4930123' }), null);
  });

  test('timeout: phone when call, announcement when play', () => {
    const base: Ivr = { description: 'x', announcement: ANN_A, '1': B };
    assert.deepEqual(checkIvr({ ...base, timeout: { seconds: 3, action: 'call' } }), {
      status: 'missing-element',
      message: 'missing timeout.phone',
    });
    assert.equal(
      checkIvr({ ...base, timeout: { seconds: 3, action: 'play' } })?.message,
      'missing timeout.announcement',
    );
    assert.equal(checkIvr({ ...base, timeout: { seconds: 3, action: 'repeat' } }), null);
  });

  test('references: announcements (timeout only for play) and the IVRs keys run', () => {
    const refs = ivrReferences(menu);
    assert.deepEqual([...refs.announcements], [ANN_A]);
    assert.deepEqual([...refs.ivrs].sort(), [B, GONE]);
    assert.deepEqual([...ivrReferences(sub).announcements], [ANN_B, ANN_T]);
  });
});

describe('IVR walk', () => {
  test('no input: waiting in the first IVR after its announcement', () => {
    assert.deepEqual(walkIvr(ivrs, A, []), {
      outcome: { kind: 'waiting', ivr: A },
      trace: [{ ivr: A, event: 'start', step: 'announcement', value: ANN_A }],
      unread: 0,
    });
  });

  test('a key runs another IVR; a number redirects and ends the walk', () => {
    const walk = walkIvr(ivrs, A, ['1', '0', '2', '5']);
    assert.deepEqual(walk.outcome, { kind: 'redirect', ivr: A, phone: '+4930123' });
    assert.deepEqual(
      walk.trace.map((entry) => [entry.ivr, entry.event, entry.step]),
      [
        [A, 'start', 'announcement'],
        [A, '1', 'ivr'],
        [B, '1', 'announcement'],
        [B, '0', 'ivr'],
        [A, '0', 'announcement'],
        [A, '2', 'redirect'],
      ],
    );
    assert.equal(walk.unread, 1);
  });

  test('other: repeat; without other an unknown symbol is ignored', () => {
    assert.deepEqual(walkIvr(ivrs, A, ['7']).trace.at(-1), {
      ivr: A,
      event: '7',
      step: 'repeat',
      value: ANN_A,
    });
    const walk = walkIvr(ivrs, B, ['7']);
    assert.deepEqual(walk.trace.at(-1), { ivr: B, event: '7', step: 'ignored' });
    assert.deepEqual(walk.outcome, { kind: 'waiting', ivr: B });
    const redirecting = new Map([[A, { ...menu, other: '+4940111' }]]);
    assert.deepEqual(walkIvr(redirecting, A, ['7']).outcome, { kind: 'redirect', ivr: A, phone: '+4940111' });
  });

  test('timeout paths: call, play, repeat, none', () => {
    assert.deepEqual(walkIvr(ivrs, A, ['timeout']).outcome, { kind: 'redirect', ivr: A, phone: '+4930999' });
    assert.deepEqual(walkIvr(ivrs, B, ['timeout', '0']), {
      outcome: { kind: 'play', ivr: B, announcement: ANN_T },
      trace: [
        { ivr: B, event: 'start', step: 'announcement', value: ANN_B },
        { ivr: B, event: 'timeout', step: 'play', value: ANN_T },
      ],
      unread: 1,
    });
    const repeating = new Map([[A, { ...menu, timeout: { seconds: 5, action: 'repeat' as const } }]]);
    assert.equal(walkIvr(repeating, A, ['timeout']).trace.at(-1)?.step, 'repeat');
    const waiting = new Map([[A, { ...menu, timeout: undefined }]]);
    assert.deepEqual(walkIvr(waiting, A, ['timeout']).outcome, { kind: 'waiting', ivr: A });
  });

  test('a missing IVR ends the walk; cycles between IVRs follow the input only', () => {
    assert.deepEqual(walkIvr(ivrs, A, ['9']).outcome, { kind: 'missing-ivr', ivr: A, missing: GONE });
    assert.deepEqual(walkIvr(ivrs, GONE, ['1']).outcome, { kind: 'missing-ivr', ivr: GONE, missing: GONE });
    const loop = walkIvr(
      ivrs,
      A,
      Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? '1' : '0')),
    );
    assert.deepEqual(loop.outcome, { kind: 'waiting', ivr: A });
    assert.equal(loop.trace.length, 2001);
  });
});
