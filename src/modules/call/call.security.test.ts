/**
 * The call engine's API entry as an attacker sees it: a callback from another user's
 * number reaches the engine's directory for nobody: wrong-phone, and no request is handed to the
 * engine; sessions without login hand nothing either. The calls a partner reads per number:
 * cdr.security.test.ts; the concurrent-call quota: the dialplan and telephony tests.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS } from '../../../test/helper.js';
import * as security from '../../../test/security.js';

for (const dialect of DIALECTS) {
  describe(`call security (${dialect})`, () => {
    test("a callback from another user's number or without login reaches no engine", async (t) => {
      const app = await build(t, { dialect });
      const { owner, attacker, anonymous } = await security.parties(app);
      await app.services.phones.addNumber('+4930100', { userUuid: owner.user.uuid });
      const requested: string[] = [];
      app.services.dialplans.onCallbackRequest((user) => requested.push(user));
      const watch = { watcher: owner.client, reads: ['/api/phone', '/api/event?next=0&timeout=0'] };
      const callback = { from: '+4930100', to: '+4930999' };
      await security.expectRefused(
        attacker.client,
        [
          ['POST', '/api/dialplan/callback', callback, 'wrong-phone'],
          ['POST', '/api/dialplan/callback', { from: '+4930100', to: security.HUGE }, 'wrong-syntax'],
        ],
        watch,
      );
      await security.expectNoAuth(anonymous, [['POST', '/api/dialplan/callback', callback]], watch);
      assert.deepEqual(requested, []);
    });
  });
}
