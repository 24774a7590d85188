import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routeNumber } from './number-routing.js';

const DP = '6f1e2a3c-0b7e-11ef-8a1b-0242ac120002';
const IVR = '7f1e2a3c-0b7e-11ef-8a1b-0242ac120002';

test('a number is answered by its dialplan, else its IVR, else the legacy dialplan', () => {
  assert.deepEqual(routeNumber({ dialplan: DP, ivr: IVR }), { kind: 'dialplan', uuid: DP });
  assert.deepEqual(routeNumber({ dialplan: null, ivr: IVR }), { kind: 'ivr', uuid: IVR });
  assert.deepEqual(routeNumber({}), { kind: 'legacy' });
  assert.deepEqual(routeNumber({ dialplan_enable: true, dialplan: null, ivr: null }), { kind: 'legacy' });
  assert.deepEqual(routeNumber({ dialplan_enable: false, dialplan: DP }), { kind: 'disabled' });
});
