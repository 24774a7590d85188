import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decideLegacyDialplan,
  type LegacyDialplan,
  legacyChangeReferences,
  legacyDialplanReferences,
} from './legacy-dialplan.js';

const ANN = '6f1e2a3c-0b7e-11ef-8a1b-0242ac120002';
const pools: LegacyDialplan = {
  phone_pool: { '+4930111': true, '+4930222': false, '+4930333': true },
  sip_pool: ['alice_02'],
  callreverse_enable: true,
};

describe('legacy dialplan decision', () => {
  test('first attempt: the action target rings with the active pool entries and call-reverse', () => {
    assert.deepEqual(
      decideLegacyDialplan(
        { ...pools, action: 'redirect', phone: '+4940999', timeout: { timeout: 20, action: 'record' } },
        'call',
      ),
      {
        situation: 'call',
        action: 'redirect',
        targets: [
          { phone: '+4940999' },
          { phone: '+4930111' },
          { phone: '+4930333' },
          { sip: 'alice_02' },
          { callreverse: true },
        ],
        ringTimeout: 20,
      },
    );
    assert.deepEqual(
      decideLegacyDialplan({ action: 'sip', sip: 'alice_01', phone: '+4940999' }, 'call').targets,
      [{ sip: 'alice_01' }],
    );
    assert.deepEqual(
      decideLegacyDialplan({ ...pools, phone: '+4940999' }, 'call').targets.length,
      4,
      'none rings the pools only',
    );
  });

  test('reject and record do not ring', () => {
    assert.deepEqual(decideLegacyDialplan({ ...pools, action: 'reject' }, 'call'), {
      situation: 'call',
      action: 'reject',
      targets: [],
    });
    assert.deepEqual(decideLegacyDialplan({ ...pools, action: 'record', announcement: ANN }, 'call'), {
      situation: 'call',
      action: 'record',
      targets: [],
      announcement: ANN,
    });
  });

  test('nothing to ring: the unavailable path at once', () => {
    const decision = decideLegacyDialplan({ unavailable: { action: 'redirect', phone: '+4940888' } }, 'call');
    assert.deepEqual(decision, {
      situation: 'unavailable',
      action: 'redirect',
      targets: [{ phone: '+4940888' }],
      reason: 'nothing to ring',
    });
    assert.equal(decideLegacyDialplan({ phone_pool: { '+4930222': false } }, 'call').action, 'reject');
  });

  test('timeout uses the dialplan phone and sip; without timeout action the call ends', () => {
    const dialplan: LegacyDialplan = {
      phone: '+4940999',
      sip: 'alice_01',
      timeout: { timeout: 10, action: 'sip' },
    };
    assert.deepEqual(decideLegacyDialplan(dialplan, 'timeout'), {
      situation: 'timeout',
      action: 'sip',
      targets: [{ sip: 'alice_01' }],
    });
    assert.equal(decideLegacyDialplan({}, 'timeout').action, 'reject');
  });

  test('unavailable and busy use their own phone and sip, else the dialplan ones', () => {
    const dialplan: LegacyDialplan = {
      phone: '+4940999',
      unavailable: { action: 'redirect' },
      busy: { action: 'redirect', phone: '+4940777' },
    };
    assert.deepEqual(decideLegacyDialplan(dialplan, 'unavailable').targets, [{ phone: '+4940999' }]);
    assert.deepEqual(decideLegacyDialplan(dialplan, 'busy').targets, [{ phone: '+4940777' }]);
    assert.deepEqual(decideLegacyDialplan({}, 'busy'), { situation: 'busy', action: 'none', targets: [] });
    assert.equal(decideLegacyDialplan({}, 'unavailable').action, 'reject');
  });

  test('a redirect or sip without target rejects, saying why', () => {
    assert.deepEqual(decideLegacyDialplan({ busy: { action: 'sip' } }, 'busy'), {
      situation: 'busy',
      action: 'reject',
      targets: [],
      reason: 'sip without sip account',
    });
  });

  test('references: the announcement and every SIP account', () => {
    const refs = legacyDialplanReferences({
      ...pools,
      announcement: ANN,
      sip: 'alice_01',
      busy: { sip: 'bob_01' },
    });
    assert.deepEqual([...refs.announcements], [ANN]);
    assert.deepEqual([...refs.sips].sort(), ['alice_01', 'alice_02', 'bob_01']);
  });

  test('references of a change: what it sets or adds, not what it deletes', () => {
    const refs = legacyChangeReferences({
      announcement: '',
      sip: 'alice_01',
      unavailable: { action: 'sip', sip: 'bob_01' },
      sip_pool: { add: ['alice_02'], delete: ['carol_01'] },
    });
    assert.deepEqual([...refs.announcements], []);
    assert.deepEqual([...refs.sips].sort(), ['alice_01', 'alice_02', 'bob_01']);
  });
});
