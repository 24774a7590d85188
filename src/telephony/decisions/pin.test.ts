import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileDialplan, type Profile } from './dialplan.js';
import { compiledPin, stepPin } from './pin.js';

const success: Profile[] = [{ reject: {} }];
const fail: Profile[] = [{ play: { announcement: '6f1e2a3c-0b7e-11ef-8a1b-0242ac120002' } }];

describe('pin', () => {
  test('pending until as many symbols as the code has are entered, then success or fail', () => {
    const pin = { code: '12#', onSuccess: success, onFail: fail };
    assert.deepEqual(stepPin(pin, '', { digit: '1' }), { state: 'pending', entered: '1' });
    assert.deepEqual(stepPin(pin, '1', { digit: '2' }), { state: 'pending', entered: '12' });
    assert.deepEqual(stepPin(pin, '12', { digit: '#' }), {
      state: 'success',
      entered: '12#',
      next: { actions: success },
    });
    assert.deepEqual(stepPin(pin, '12', { digit: '3' }), {
      state: 'fail',
      entered: '123',
      next: { actions: fail },
    });
  });

  test('symbols that are not DTMF are ignored', () => {
    assert.deepEqual(stepPin({ code: '1', onSuccess: success }, '', { digit: 'x' }), {
      state: 'pending',
      entered: '',
    });
  });

  test('missing or empty onFail/onTimeout/onSuccess: the next profile action starts', () => {
    const pin = { code: '1', timeout: 10, onSuccess: [], onFail: [] };
    assert.deepEqual(stepPin(pin, '', { digit: '2' }).state, 'fail');
    assert.deepEqual((stepPin(pin, '', { digit: '2' }) as { next: unknown }).next, { nextProfile: true });
    assert.deepEqual((stepPin(pin, '', { digit: '1' }) as { next: unknown }).next, { nextProfile: true });
    assert.deepEqual(stepPin(pin, '', { timeout: true }), {
      state: 'timeout',
      entered: '',
      next: { nextProfile: true },
    });
  });

  test('timeout: onTimeout runs; without a timeout (0) the pin waits for ever', () => {
    const onTimeout: Profile[] = [{ reject: {} }];
    assert.deepEqual(
      stepPin({ code: '1', timeout: 5, onSuccess: success, onTimeout }, '', { timeout: true }),
      {
        state: 'timeout',
        entered: '',
        next: { actions: onTimeout },
      },
    );
    assert.deepEqual(stepPin({ code: '1', onSuccess: success, onTimeout }, '', { timeout: true }), {
      state: 'pending',
      entered: '',
    });
  });

  test('works on the compiled pin with compiled arrays', () => {
    const compiled = compileDialplan({
      profiles: [{ pin: { code: '7', onSuccess: success, onFail: fail } }],
    });
    const pin = compiledPin(compiled.profiles[0]!)!;
    const step = stepPin(pin, '', { digit: '7' });
    assert.equal(step.state, 'success');
    assert.deepEqual(
      (step as { next: { actions: Array<{ action: unknown }> } }).next.actions.map((item) => item.action),
      [{ name: 'reject', params: {} }],
    );
    assert.equal(compiledPin(compileDialplan({ profiles: success }).profiles[0]!), null);
  });
});
