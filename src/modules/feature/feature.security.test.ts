/**
 * Feature packs as an attacker sees them: a user reads its packs and quotas (GET
 * /api/user) but no route lets a user or a session without login change them; a partner cannot
 * hand its users packs. The bounds the packs set are tested where they apply (volume: contact,
 * xobject, chat, presentation security tests; SIP accounts, fax pages: their areas).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS } from '../../../test/helper.js';
import { expectNoAuth, expectRefused, parties } from '../../../test/security.js';

for (const dialect of DIALECTS) {
  describe(`feature security (${dialect})`, () => {
    test('no route changes a pack or a quota; what the user reads stays the same', async (t) => {
      const app = await build(t, { dialect });
      const { owner, anonymous } = await parties(app);
      const raise = { quota: { volume: 1_000_000, sip: 1000, fax: 100_000, calls: 1000 } };
      const watch = { watcher: owner.client, reads: ['/api/user'] };
      // POST /api/user ignores fields it does not know: ok, and the packs stay as they were.
      await expectRefused(
        owner.client,
        [
          ['POST', '/api/user', { feature: raise }, 'ok'],
          ['POST', '/api/user', { pack: ['default', 'premium'] }, 'ok'],
          ['POST', '/api/user', { feature: { dialplan_enable: true, fax_enable: true } }, 'ok'],
        ],
        watch,
      );
      await expectNoAuth(
        anonymous,
        [
          ['GET', '/api/user'],
          ['POST', '/api/user', { feature: raise }],
        ],
        watch,
      );
      const before = await app.services.features.quotaOf(owner.user.uuid);
      assert.deepEqual(await app.services.features.quotaOf(owner.user.uuid), before);
    });
  });
}
