import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileBodyCheck } from '../../platform/validation.js';
import { checkIvr } from '../../telephony/decisions/ivr.js';
import { IvrBody, type IvrBody as IvrBodyType, IvrSimulateBody } from './ivr.schema.js';

const ANN = '6f1e2a3c-0b7e-11ef-8a1b-0242ac120002';
const OTHER = '7f1e2a3c-0b7e-11ef-8a1b-0242ac120002';
const check = compileBodyCheck(IvrBody);

/** The route's order: the schema, then the rules it cannot express. */
function judge(body: object): string {
  const error = check(body);
  if (error) return `${error.status}: ${error.message}`;
  const problem = checkIvr(body as IvrBodyType);
  return problem ? `${problem.status}: ${problem.message}` : 'ok';
}

const base = { description: 'menu', announcement: ANN };

describe('IVR body', () => {
  test('every field', () => {
    assert.equal(
      judge({
        ...base,
        '0': OTHER,
        '9': '+4930123',
        '*': OTHER,
        '#': '+4930999',
        other: 'repeat',
        timeout: { seconds: 5, action: 'play', announcement: ANN },
      }),
      'ok',
    );
    assert.equal(
      judge({
        ...base,
        '1': OTHER,
        other: '+4930123',
        timeout: { seconds: 1, action: 'call', phone: '+4930123' },
      }),
      'ok',
    );
  });

  test('missing elements: description, announcement, a key, timeout members', () => {
    assert.equal(judge({ announcement: ANN, '1': OTHER }), 'missing-element: missing description');
    assert.equal(judge({ description: 'x', '1': OTHER }), 'missing-element: missing announcement');
    assert.equal(judge(base), 'missing-element: missing 0-9, * or # (at least one key)');
    assert.equal(
      judge({ ...base, '1': OTHER, timeout: { action: 'repeat' } }),
      'missing-element: missing timeout.seconds',
    );
    assert.equal(
      judge({ ...base, '1': OTHER, timeout: { seconds: 3 } }),
      'missing-element: missing timeout.action',
    );
    assert.equal(
      judge({ ...base, '1': OTHER, timeout: { seconds: 3, action: 'call' } }),
      'missing-element: missing timeout.phone',
    );
    assert.equal(
      judge({ ...base, '1': OTHER, timeout: { seconds: 3, action: 'play' } }),
      'missing-element: missing timeout.announcement',
    );
  });

  test('wrong syntax', () => {
    assert.equal(judge({ ...base, description: '', '1': OTHER }), 'wrong-syntax: bad description');
    assert.equal(
      judge({ ...base, description: 'x'.repeat(201), '1': OTHER }),
      'wrong-syntax: bad description',
    );
    assert.equal(judge({ ...base, announcement: 'x', '1': OTHER }), 'wrong-syntax: bad announcement');
    assert.equal(judge({ ...base, '1': 'menu' }), 'wrong-syntax: bad 1');
    assert.equal(judge({ ...base, '#': '030123' }), 'wrong-syntax: bad #');
    assert.equal(judge({ ...base, '1': OTHER, other: 'hangup' }), 'wrong-syntax: bad other');
    assert.equal(
      judge({ ...base, '1': OTHER, timeout: { seconds: 0, action: 'repeat' } }),
      'wrong-syntax: bad timeout.seconds',
    );
    assert.equal(
      judge({ ...base, '1': OTHER, timeout: { seconds: 2, action: 'wait' } }),
      'wrong-syntax: bad timeout.action',
    );
    assert.equal(
      judge({ ...base, '1': OTHER, timeout: { seconds: 2, action: 'call', phone: 'bob' } }),
      'wrong-syntax: bad timeout.phone',
    );
  });

  test('simulate body: DTMF symbols and timeouts, at most 100', () => {
    const simulate = compileBodyCheck(IvrSimulateBody);
    assert.equal(simulate({ events: ['1', '#', 'timeout'] }), undefined);
    assert.equal(simulate({ events: ['x'] })?.status, 'wrong-syntax');
    assert.equal(simulate({ events: Array(101).fill('1') })?.status, 'wrong-syntax');
    assert.equal(simulate({})?.status, 'missing-element');
  });
});
