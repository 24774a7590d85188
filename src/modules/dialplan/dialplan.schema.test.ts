import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileBodyCheck } from '../../platform/validation.js';
import {
  CallbackBody,
  CallReverseBody,
  CallThroughBody,
  DialplanSimulateBody,
  DialplanV2Body,
  LegacyDialplanBody,
} from './dialplan.schema.js';

const ANN = '6f1e2a3c-0b7e-11ef-8a1b-0242ac120002';

function judge(schema: object) {
  const check = compileBodyCheck(schema);
  return (data: unknown) => {
    const error = check(data);
    return error ? `${error.status}: ${error.message}` : 'ok';
  };
}

describe('dialplan v2 body', () => {
  const v2 = judge(DialplanV2Body);

  test('a full dialplan passes', () => {
    const target = { target: 'alice_01', timeout: 20, clip_number: '+4930123' };
    const body = {
      dialplan: {
        description: 'office',
        ringtone: { announcement: ANN, mix: true },
        profiles: [
          {
            filter: {
              caller: '^\\+49',
              time: {
                weekdays: ['MON', 'FRI'],
                time_start: '08:00',
                time_end: '17:00',
                time_zone: 'Europe/Berlin',
              },
            },
            linear: { targets: [target, { target: '+4930999' }], timeout: 60 },
          },
          { filter: { time: { date: '24.12.2026' } }, play: { announcement: ANN } },
          { cyclic: { targets: [target] } },
          { parallel: { targets: ['+4930111', 'bob_02'], clip_number: '+4930123' } },
          {
            pin: {
              code: '12#',
              timeout: 10,
              onStart: [{ play: { announcement: ANN } }],
              onSuccess: [{ pin: { code: '9', onSuccess: [{ record: { announcement: ANN } }] } }],
              onFail: [{ reject: {} }],
            },
          },
          { reject: {} },
        ],
      },
    };
    assert.equal(v2(body), 'ok');
    assert.equal(v2({ dialplan: {} }), 'ok');
  });

  test('missing elements', () => {
    assert.equal(v2({}), 'missing-element: missing dialplan');
    assert.equal(
      v2({ dialplan: { profiles: [{ play: {} }] } }),
      'missing-element: missing dialplan.profiles.0.play.announcement',
    );
    assert.equal(
      v2({ dialplan: { profiles: [{ parallel: {} }] } }),
      'missing-element: missing dialplan.profiles.0.parallel.targets',
    );
    assert.equal(
      v2({ dialplan: { profiles: [{ linear: { targets: [{ timeout: 3 }] } }] } }),
      'missing-element: missing dialplan.profiles.0.linear.targets.0.target',
    );
    assert.equal(
      v2({ dialplan: { profiles: [{ pin: { code: '1' } }] } }),
      'missing-element: missing dialplan.profiles.0.pin.onSuccess',
    );
    assert.equal(
      v2({ dialplan: { profiles: [{ pin: { code: '1', onSuccess: [{ play: {} }] } }] } }),
      'missing-element: missing dialplan.profiles.0.pin.onSuccess.0.play.announcement',
    );
  });

  test('wrong syntax', () => {
    const profile = (p: object) => v2({ dialplan: { profiles: [p] } });
    assert.equal(
      v2({ dialplan: { description: 'x'.repeat(201) } }),
      'wrong-syntax: bad dialplan.description',
    );
    assert.equal(v2({ dialplan: { ringtone: { mix: 'yes' } } }), 'wrong-syntax: bad dialplan.ringtone.mix');
    assert.equal(
      profile({ play: { announcement: 'nope' } }),
      'wrong-syntax: bad dialplan.profiles.0.play.announcement',
    );
    assert.equal(
      profile({ parallel: { targets: [] } }),
      'wrong-syntax: bad dialplan.profiles.0.parallel.targets',
    );
    assert.equal(
      profile({ parallel: { targets: ['Alice_01'] } }),
      'wrong-syntax: bad dialplan.profiles.0.parallel.targets.0',
    );
    assert.equal(
      profile({ linear: { targets: [{ target: '+49' }] } }),
      'wrong-syntax: bad dialplan.profiles.0.linear.targets.0.target',
    );
    assert.equal(
      profile({ cyclic: { targets: [{ target: '+4930123' }], timeout: 1.5 } }),
      'wrong-syntax: bad dialplan.profiles.0.cyclic.timeout',
    );
    assert.equal(
      profile({ reject: {}, filter: { caller: 'a'.repeat(501) } }),
      'wrong-syntax: bad dialplan.profiles.0.filter.caller',
    );
    assert.equal(
      profile({ reject: {}, filter: { time: { weekdays: ['MONDAY'] } } }),
      'wrong-syntax: bad dialplan.profiles.0.filter.time.weekdays.0',
    );
    assert.equal(
      profile({ reject: {}, filter: { time: { date: '2026-05-01' } } }),
      'wrong-syntax: bad dialplan.profiles.0.filter.time.date',
    );
    assert.equal(
      profile({ reject: {}, filter: { time: { time_start: '8:00' } } }),
      'wrong-syntax: bad dialplan.profiles.0.filter.time.time_start',
    );
    assert.equal(
      profile({ reject: {}, filter: { time: { time_zone: 'X' } } }),
      'wrong-syntax: bad dialplan.profiles.0.filter.time.time_zone',
    );
    assert.equal(
      profile({ pin: { code: '12x', onSuccess: [] } }),
      'wrong-syntax: bad dialplan.profiles.0.pin.code',
    );
  });

  test('simulate body', () => {
    const simulate = judge(DialplanSimulateBody);
    assert.equal(simulate({ caller: 'anonymous', time: 1_777_777_777 }), 'ok');
    assert.equal(simulate({ caller: '+4930', time: 1_777_777_777_000 }), 'wrong-syntax: bad time');
    assert.equal(simulate({}), 'missing-element: missing caller');
    assert.equal(simulate({ caller: '+4930', time: -1 }), 'wrong-syntax: bad time');
  });
});

describe('legacy dialplan body', () => {
  const legacy = judge(LegacyDialplanBody);

  test('every field, and empty strings that delete', () => {
    assert.equal(
      legacy({
        announcement: ANN,
        mix_ringtone: false,
        action: 'redirect',
        phone: '+4930123',
        sip: 'alice_01',
        dial_prefix: '+4930',
        clip_number: '+4930123',
        clir_enable: true,
        cti_via: '+4930555',
        callreverse_enable: false,
        timeout: { timeout: 20, action: 'record' },
        unavailable: { action: 'sip', sip: 'alice_02' },
        busy: { action: 'none' },
        phone_pool: { add: { '+4930111': true, '+4930222': false }, delete: ['+4930333'] },
        sip_pool: { add: ['alice_03'], delete: ['alice_04'] },
      }),
      'ok',
    );
    assert.equal(
      legacy({ announcement: '', phone: '', sip: '', dial_prefix: '', clip_number: '', cti_via: '' }),
      'ok',
    );
    assert.equal(legacy({}), 'ok');
  });

  test('wrong syntax: formats, none for timeout and unavailable, pool keys', () => {
    assert.equal(legacy({ announcement: 'x' }), 'wrong-syntax: bad announcement');
    assert.equal(legacy({ action: 'forward' }), 'wrong-syntax: bad action');
    assert.equal(legacy({ phone: '030123' }), 'wrong-syntax: bad phone');
    assert.equal(legacy({ sip: 'alice' }), 'wrong-syntax: bad sip');
    assert.equal(legacy({ timeout: { action: 'none' } }), 'wrong-syntax: bad timeout.action');
    assert.equal(legacy({ unavailable: { action: 'none' } }), 'wrong-syntax: bad unavailable.action');
    assert.equal(legacy({ busy: { action: 'none', phone: '' } }), 'wrong-syntax: bad busy.phone');
    assert.equal(legacy({ phone_pool: { add: { '030': true } } }), 'wrong-syntax: bad phone_pool.add');
    assert.equal(
      legacy({ phone_pool: { add: { '+4930111': 'yes' } } }),
      'wrong-syntax: bad phone_pool.add.+4930111',
    );
    assert.equal(legacy({ sip_pool: { add: ['bob'] } }), 'wrong-syntax: bad sip_pool.add.0');
    assert.equal(legacy({ clir_enable: 'true' }), 'wrong-syntax: bad clir_enable');
  });
});

describe('call feature bodies', () => {
  test('callthrough: phone (name or number) and filter optional', () => {
    const callthrough = judge(CallThroughBody);
    assert.equal(callthrough({}), 'ok');
    assert.equal(callthrough({ phone: 'alice', filter: '+4930123' }), 'ok');
    assert.equal(callthrough({ phone: '+4930123' }), 'ok');
    assert.equal(callthrough({ phone: 'a' }), 'wrong-syntax: bad phone');
    assert.equal(
      callthrough({ phone: '+4930123x' }),
      'wrong-syntax: bad phone',
      'the alternation is anchored whole',
    );
    assert.equal(callthrough({ filter: 'alice' }), 'wrong-syntax: bad filter');
  });

  test('callback: from and to', () => {
    const callback = judge(CallbackBody);
    assert.equal(callback({ from: '+4930123', to: 'bob' }), 'ok');
    assert.equal(callback({ to: 'bob' }), 'missing-element: missing from');
    assert.equal(callback({ from: 'bob', to: '+4930' }), 'wrong-syntax: bad from');
  });

  test('callreverse: filter', () => {
    const callreverse = judge(CallReverseBody);
    assert.equal(callreverse({ filter: '+4930123' }), 'ok');
    assert.equal(callreverse({}), 'missing-element: missing filter');
    assert.equal(callreverse({ filter: '' }), 'wrong-syntax: bad filter');
  });
});
