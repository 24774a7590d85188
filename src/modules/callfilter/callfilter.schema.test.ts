import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileBodyCheck } from '../../platform/validation.js';
import { checkCallFilter } from '../../telephony/decisions/callfilter.js';
import { CallFilterBody, CallFilterOperator, CallFilterSimulateBody } from './callfilter.schema.js';

const check = compileBodyCheck(CallFilterBody);

function judge(body: object): string {
  const error = check(body);
  if (error) return `${error.status}: ${error.message}`;
  const problem = checkCallFilter((body as { callfilter: unknown }).callfilter);
  return problem ? `${problem.status}: ${problem.message}` : 'ok';
}

describe('call filter body', () => {
  test('the schema needs the array; the operators are judged by checkCallFilter', () => {
    assert.equal(judge({}), 'missing-element: missing callfilter');
    assert.equal(judge({ callfilter: {} }), 'wrong-syntax: bad callfilter');
    assert.equal(judge({ callfilter: [] }), 'missing-element: missing callfilter operator');
    assert.equal(judge({ callfilter: [{ type: 'service', key: 'fax', pass: false }] }), 'ok');
    assert.equal(
      judge({ callfilter: [[{ type: 'match', key: '^\\+1', break: false }]] }),
      'wrong-syntax: bad callfilter.0.0.break: only true',
    );
    const many = Array.from({ length: 251 }, () => ({ type: 'service', key: 'fax', pass: false }));
    assert.equal(judge({ callfilter: many }), 'too-large: more than 250 operators in callfilter');
  });

  test('the documented operator schema agrees with checkCallFilter on valid operators', () => {
    const operator = compileBodyCheck(CallFilterOperator);
    const valid = [
      { type: 'replace', key: '^0', value: '+49' },
      { type: 'match', key: '^\\+1', pass: true, reverse: true },
      { type: 'service', key: 'callback', break: true },
    ];
    for (const op of valid) {
      assert.equal(operator(op), undefined);
      assert.equal(checkCallFilter([op]), null);
    }
  });

  test('simulate body', () => {
    const simulate = compileBodyCheck(CallFilterSimulateBody);
    assert.equal(simulate({ destination: '+4930123', service: 'sip' }), undefined);
    assert.equal(simulate({ destination: '+4930123', service: 'telex' })?.status, 'wrong-syntax');
    assert.equal(simulate({ service: 'sip' })?.status, 'missing-element');
  });
});
