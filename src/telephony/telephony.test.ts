/**
 * The write-back comparison of the location table with Kamailio's last report (telephony.ts):
 * when the node goes back to reading the table, and which rows it takes as failed deletes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareWithTable, type Registration } from './telephony.js';

const now = 1_000_000;
const at = (contact: string, expires: number): Registration => ({
  sipUser: 'alice_01',
  contact,
  expires,
  userAgent: 'phone',
});

test('the table has caught up when it shows every reported contact, a refresh may have moved expiries later', () => {
  const reported = [at('10.0.0.1:5060', now + 60)];
  assert.deepEqual(compareWithTable([at('10.0.0.1:5060', now + 60)], reported, now), {
    caughtUp: true,
    extra: [],
  });
  assert.deepEqual(compareWithTable([at('10.0.0.1:5060', now + 600)], reported, now), {
    caughtUp: true,
    extra: [],
  });
});

test('the table lags: a reported contact missing or with an older expiry', () => {
  const reported = [at('10.0.0.1:5060', now + 60), at('10.0.0.2:5060', now + 60)];
  assert.equal(compareWithTable([at('10.0.0.1:5060', now + 60)], reported, now).caughtUp, false);
  assert.equal(
    compareWithTable([at('10.0.0.1:5060', now + 60), at('10.0.0.2:5060', now + 30)], reported, now).caughtUp,
    false,
  );
});

test('rows of contacts the report no longer has are extra; expired rows and reports count for nothing', () => {
  assert.deepEqual(compareWithTable([at('10.0.0.1:5060', now + 60)], [], now), {
    caughtUp: true,
    extra: ['10.0.0.1:5060'],
  });
  assert.deepEqual(compareWithTable([at('10.0.0.1:5060', now - 1)], [at('10.0.0.2:5060', now - 5)], now), {
    caughtUp: true,
    extra: [],
  });
});
