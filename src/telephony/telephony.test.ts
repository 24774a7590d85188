/**
 * The write-back comparison of the location table with Kamailio's last report (telephony.ts):
 * when the node goes back to reading the table, and which rows it takes as failed deletes; and
 * how long a row past its expiry still counts while usrloc's write-back may lag.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build, DIALECTS } from '../../test/helper.js';
import { newUuid } from '../platform/ids.js';
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

for (const dialect of DIALECTS) {
  test(`a table row just past its expiry counts on write-back only, for one interval (${dialect})`, async (t) => {
    const app = await build(t, { dialect });
    const seconds = Math.floor(Date.now() / 1000);
    // Kamailio's own formats: a Julian day (db_sqlite), a UTC timestamp (PostgreSQL).
    const stamp = (unix: number) =>
      dialect === 'sqlite'
        ? String((unix - 0.5) / 86400 + 2440587.5)
        : new Date(unix * 1000).toISOString().slice(0, 19).replace('T', ' ');
    const row = (username: string, expires: number) => ({
      ruid: newUuid(),
      username,
      contact: 'sip:phone@10.0.0.1:5060',
      expires: stamp(expires),
      user_agent: 'phone',
    });
    await app.database.db
      .insertInto('location')
      .values([row('lag_01', seconds - 2), row('lag_02', seconds - 7), row('lag_03', seconds + 60)] as never)
      .execute();
    const count = async (user: string) => (await app.services.telephony.registrations(user)).length;
    // A refresh just before the expiry may not be written back yet (SQLite: 5 s).
    assert.equal(await count('lag_01'), dialect === 'sqlite' ? 1 : 0);
    assert.equal(await count('lag_02'), 0);
    assert.equal(await count('lag_03'), 1);
  });
}
