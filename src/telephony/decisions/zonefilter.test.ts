import assert from 'node:assert/strict';
import { test } from 'node:test';
import { zoneAllows } from './zonefilter.js';

test('zoneAllows: no zones allow everything; E.164 numbers must begin with a zone; internal targets pass', () => {
  assert.equal(zoneAllows([], '+1555123'), true);
  assert.equal(zoneAllows(['+49', '+4330'], '+4930123'), true);
  assert.equal(zoneAllows(['+49', '+4330'], '+4330999'), true);
  assert.equal(zoneAllows(['+49', '+4330'], '+4310999'), false);
  assert.equal(zoneAllows(['+49'], '+1555'), false);
  assert.equal(zoneAllows(['+49'], 'alice_01'), true);
  assert.equal(zoneAllows(['+49'], '12'), true);
});
