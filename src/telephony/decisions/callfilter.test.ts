import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type CallFilter,
  type CallService,
  checkCallFilter,
  compileCallFilter,
  decideCallFilter,
  MAX_GROUP_DEPTH,
} from './callfilter.js';

function decide(filter: CallFilter, destination: string, service: CallService = 'sip') {
  assert.equal(checkCallFilter(filter), null);
  return decideCallFilter(compileCallFilter(filter), destination, service, { trace: true });
}

describe('call filter checks', () => {
  const status = (filter: unknown) => checkCallFilter(filter)?.status;
  const message = (filter: unknown) => checkCallFilter(filter)?.message;

  test('replace has key and value, no pass/break/reverse', () => {
    assert.equal(status([{ type: 'replace', key: '^0', value: '+49' }]), undefined);
    assert.equal(message([{ type: 'replace', key: '^0' }]), 'missing callfilter.0.value');
    assert.equal(
      message([{ type: 'replace', key: '^0', value: '+49', pass: true }]),
      'bad callfilter.0.pass: not allowed with replace',
    );
    assert.equal(status([{ type: 'replace', key: '^0', value: '', break: true }]), 'wrong-syntax');
    assert.equal(status([{ type: 'replace', key: '^0', value: 5 }]), 'wrong-syntax');
  });

  test('match and service: exactly one of pass (boolean) or break (true); reverse only true', () => {
    assert.equal(status([{ type: 'match', key: '^\\+49', pass: false, reverse: true }]), undefined);
    assert.equal(status([{ type: 'service', key: 'fax', break: true }]), undefined);
    assert.equal(message([{ type: 'match', key: 'x' }]), 'missing callfilter.0.pass or break');
    assert.equal(
      message([{ type: 'match', key: 'x', pass: true, break: true }]),
      'bad callfilter.0.break: not allowed with pass',
    );
    assert.equal(status([{ type: 'match', key: 'x', break: false }]), 'wrong-syntax');
    assert.equal(status([{ type: 'match', key: 'x', pass: 'yes' }]), 'wrong-syntax');
    assert.equal(status([{ type: 'service', key: 'fax', pass: true, reverse: false }]), 'wrong-syntax');
  });

  test('types, keys and patterns', () => {
    assert.equal(message([{ key: 'x', pass: true }]), 'missing callfilter.0.type');
    assert.equal(message([{ type: 'match', pass: true }]), 'missing callfilter.0.key');
    assert.equal(status([{ type: 'block', key: 'x', pass: true }]), 'wrong-syntax');
    assert.match(message([{ type: 'service', key: 'telex', pass: true }])!, /key: one of fax, sip, dialplan/);
    for (const key of [
      'fax',
      'sip',
      'dialplan',
      'call_through',
      'callback',
      'ivr',
      'announcement_call',
      'call_api',
    ]) {
      assert.equal(status([{ type: 'service', key, pass: true }]), undefined, key);
    }
    assert.match(message([{ type: 'match', key: '(a', pass: true }])!, /key: not a regular expression/);
    assert.match(message([{ type: 'replace', key: 'a'.repeat(501), value: '' }])!, /longer than 500/);
    assert.equal(status([{ type: 'match', key: '(?<!a)b', pass: true }]), 'wrong-syntax');
    assert.equal(status(['match']), 'wrong-syntax');
    assert.equal(status({}), 'wrong-syntax');
  });

  test('at least one operator; more than 250 over the groups is too-large', () => {
    assert.equal(message([]), 'missing callfilter operator');
    assert.equal(status([[], [[]]]), 'missing-element');
    const op = { type: 'service', key: 'fax', pass: false };
    const groups = Array.from({ length: 25 }, () => Array.from({ length: 10 }, () => op));
    assert.equal(status(groups), undefined);
    assert.equal(status([...groups, op]), 'too-large');
    assert.equal(status([...groups, op, { type: 'match' }]), 'missing-element', 'generic statuses first');
  });

  test('group nesting is bounded, without recursion over the input', () => {
    let deep: unknown = [{ type: 'service', key: 'fax', pass: false }];
    for (let i = 0; i < MAX_GROUP_DEPTH; i++) deep = [deep];
    assert.equal(status(deep), undefined);
    assert.match(message([deep])!, /groups nested deeper than 8/);
    let huge: unknown = [];
    for (let i = 0; i < 100_000; i++) huge = [huge];
    assert.equal(status(huge), 'wrong-syntax');
  });
});

describe('call filter decision', () => {
  test('an empty filter or nothing matching: allowed', () => {
    assert.deepEqual(decideCallFilter(compileCallFilter([]), '+4930', 'sip'), {
      allowed: true,
      destination: '+4930',
      decidedBy: null,
      trace: [],
    });
    assert.equal(decide([{ type: 'match', key: '^\\+1', pass: false }], '+4930').allowed, true);
  });

  test('pass true allows and pass false denies at once', () => {
    const filter: CallFilter = [
      { type: 'match', key: '^\\+49', pass: true },
      { type: 'match', key: '.*', pass: false },
    ];
    assert.equal(decide(filter, '+4930').allowed, true);
    const denied = decide(filter, '+1555');
    assert.equal(denied.allowed, false);
    assert.equal(denied.decidedBy, 'callfilter.1');
    assert.deepEqual(denied.trace, [
      { operator: 'callfilter.0', held: false },
      { operator: 'callfilter.1', held: true, effect: 'deny' },
    ]);
  });

  test('replace rewrites the destination for what follows; groups keep it', () => {
    const filter: CallFilter = [
      [{ type: 'replace', key: '^0([1-9])', value: '+49$1' }],
      { type: 'replace', key: '-', value: '' },
      { type: 'match', key: '^\\+49', pass: true },
      { type: 'match', key: '', pass: false },
    ];
    const decision = decide(filter, '030-12-34');
    assert.deepEqual([decision.allowed, decision.destination], [true, '+49301234']);
    assert.equal(decision.trace[0]?.destination, '+4930-12-34');
    assert.equal(decide(filter, '0030').allowed, false);
  });

  test('service tests the call type; reverse negates', () => {
    const onlySip: CallFilter = [{ type: 'service', key: 'sip', reverse: true, pass: false }];
    assert.equal(decide(onlySip, '+4930', 'sip').allowed, true);
    assert.equal(decide(onlySip, '+4930', 'fax').allowed, false);
    const notGerman: CallFilter = [{ type: 'match', key: '^\\+49', reverse: true, pass: false }];
    assert.equal(decide(notGerman, '+1555').allowed, false);
    assert.equal(decide(notGerman, '+4930').allowed, true);
  });

  test('break ends the current group; evaluation goes on after it', () => {
    const filter: CallFilter = [
      [
        { type: 'service', key: 'fax', break: true },
        { type: 'match', key: '^\\+1', pass: false },
      ],
      { type: 'match', key: '^\\+1900', pass: false },
    ];
    assert.equal(decide(filter, '+1555', 'sip').allowed, false, 'sip to +1: denied in the group');
    assert.equal(decide(filter, '+1555', 'fax').allowed, true, 'fax breaks out of the group');
    const fax = decide(filter, '+1900', 'fax');
    assert.deepEqual([fax.allowed, fax.decidedBy], [false, 'callfilter.1']);
    assert.deepEqual(fax.trace[0], { operator: 'callfilter.0.0', held: true, effect: 'break' });
    const topBreak = decide(
      [
        { type: 'service', key: 'fax', break: true },
        { type: 'match', key: '', pass: false },
      ],
      '+1',
      'fax',
    );
    assert.deepEqual(
      [topBreak.allowed, topBreak.decidedBy],
      [true, null],
      'a break at the top ends the filter',
    );
  });

  test('a pathological pattern runs in linear time (RE2)', () => {
    const decision = decide([{ type: 'match', key: '(a+)+$', pass: false }], `${'a'.repeat(50_000)}!`);
    assert.equal(decision.allowed, true);
  });
});
