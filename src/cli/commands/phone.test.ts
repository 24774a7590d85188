/**
 * `zentrale-admin phone set` and `phone show` (a number's partner switches) on
 * both dialects, run in this process through `runAdmin` over a fresh database that an app built
 * with the same environment reads back through GET /api/phone.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cliWithUsers } from '../../../test/cli.js';
import { Client, DIALECTS } from '../../../test/helper.js';

for (const dialect of DIALECTS) {
  describe(`operator CLI: phone switches (${dialect})`, () => {
    test('set and show partner switches; the user sees them in GET /api/phone; usage errors and wrong-phone', async (t) => {
      const { app, cli, users } = await cliWithUsers(t, dialect, ['erin']);
      const [user] = users as [(typeof users)[number]];
      await app.services.phones.addNumber('+4930765432', { userUuid: user.uuid }, false);

      const shown = await cli.run('phone', 'show', '+4930765432', '--json');
      assert.equal(shown.code, 0, shown.stderr);
      const before = JSON.parse(shown.stdout);
      assert.equal(before.username, 'erin');
      assert.deepEqual(before.switches, {
        dialplan_enable: false,
        call_enable: false,
        recording_enable: true,
        fax_enable: true,
        conference_enable: true,
        play_announcement_only: false,
      });

      const set = await cli.run(
        'phone',
        'set',
        '+4930765432',
        '--switch',
        'dialplan_enable',
        '--switch',
        'fax_enable=off',
        '--json',
      );
      assert.equal(set.code, 0, set.stderr);
      const after = JSON.parse(set.stdout);
      assert.equal(after.switches.dialplan_enable, true);
      assert.equal(after.switches.fax_enable, false);
      assert.equal(after.effective.dialplan, true);
      assert.equal(after.effective.call_api, false);

      const text = await cli.run('phone', 'show', '+4930765432');
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /dialplan_enable on, call_enable off, recording_enable on, fax_enable off/);

      const client = new Client(app);
      await client.login('erin', 'secret-pw');
      const phone = (await client.call('GET', '/api/phone')).phone as Record<string, Record<string, unknown>>;
      assert.equal(phone['+4930765432']?.dialplan_enable, true);
      assert.equal(phone['+4930765432']?.fax_enable, false);
      assert.equal(phone['+4930765432']?.answer, 'legacy');

      for (const [args, code, message] of [
        [['set', '+4930765432', '--switch', 'locked=true'], 2, /is not one of dialplan_enable/],
        [['set', '+4930765432', '--switch', 'fax_enable=maybe'], 2, /is not true or false/],
        [['set', '+4930765432'], 2, /at least one --switch/],
        [['set', '+4930000000', '--switch', 'call_enable'], 1, /wrong-phone/],
        [['show', '+4930000000'], 1, /wrong-phone/],
        [['show', '030'], 2, /a phone number/],
      ] as const)
        await cli.fails(code, message, 'phone', ...args);
      const unchanged = JSON.parse((await cli.run('phone', 'show', '+4930765432', '--json')).stdout);
      assert.deepEqual(unchanged.switches, after.switches);
    });
  });
}
