/**
 * Hardware codes as an attacker sees them: guessing codes through POST
 * /api/signup/verification is throttled per session (after THROTTLE_LIMIT wrong codes even the
 * right one is refused), a refused or malformed request uses up no verification of a real code
 * and stores no key, and without a session nothing happens. The bound of 5 verifications a code:
 * hardware.test.ts, signup.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, Client, DIALECTS } from '../../../test/helper.js';
import { HUGE } from '../../../test/security.js';
import { THROTTLE_LIMIT } from '../../platform/throttle/throttle.js';

const CODE = 'HW-2024-ABCDEF';

for (const dialect of DIALECTS) {
  describe(`hardware code security (${dialect})`, () => {
    test('guessing is throttled per session; refusals use up nothing and store no key', async (t) => {
      const app = await build(t, { dialect });
      await app.services.hardwareCodes.registerCode(CODE, 'box');
      const uses = async () => (await app.services.hardwareCodes.listCodes())[0]?.uses;
      const keys = async () =>
        Number(
          (
            await app.database.db
              .selectFrom('signup_verification')
              .select((eb) => eb.fn.countAll<number | string>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const request = (client: Client, body: Record<string, unknown>) =>
        client.call('POST', '/api/signup/verification', { email: 'box@example.com', ...body });
      const attacker = new Client(app);
      await attacker.open();
      const cases: [Record<string, unknown>, string][] = [
        [{ 'hardware-code': HUGE }, 'wrong-syntax'],
        [{ 'hardware-code': 5 }, 'wrong-syntax'],
        [{ 'hardware-code': CODE, email: 'not-an-address' }, 'wrong-syntax'],
        [{ 'hardware-code': CODE, email: undefined }, 'missing-element'],
      ];
      for (const [body, status] of cases) assert.equal((await request(attacker, body)).status, status);
      for (let i = 0; i < THROTTLE_LIMIT; i++)
        assert.equal((await request(attacker, { 'hardware-code': `HW-GUESS-${i}` })).status, 'wrong-code');
      assert.equal((await request(attacker, { 'hardware-code': CODE })).status, 'resource-throttle');
      assert.deepEqual([await uses(), await keys()], [0, 0]);
      assert.equal((await request(new Client(app), { 'hardware-code': CODE })).status, 'no-session');
      assert.deepEqual([await uses(), await keys()], [0, 0]);
      // Another session with the right code: one use, one key.
      const owner = new Client(app);
      await owner.open();
      assert.equal((await request(owner, { 'hardware-code': CODE })).status, 'ok');
      assert.deepEqual([await uses(), await keys()], [1, 1]);
    });
  });
}
