/**
 * Enterprise settings (a partner's own, Zentrale's shape) as an attacker sees them: each partner
 * reads and changes only its own, a user's session or no login reaches none, and bad input
 * changes nothing. A partner keeps one settings record of a bounded description and a flag.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS } from '../../../test/helper.js';
import {
  expectLockedOut,
  expectStatus,
  HUGE,
  type Probe,
  twoPartners,
  unchangedBy,
} from '../../../test/security-telephony.js';

const URL = '/api/partner/enterprise';

for (const dialect of DIALECTS) {
  describe(`enterprise settings as an attacker sees them (${dialect})`, () => {
    test("another partner's changes, a user session, no login, bad input leave a partner's settings unchanged", async (t) => {
      const app = await build(t, { dialect });
      const { victim, attacker, plain } = await twoPartners(app, ['enterprise']);
      await expectStatus(
        victim.client,
        [['POST', URL, { description: 'Secret GmbH', group_prefix_enable: true }]],
        'ok',
      );
      const read = async () => [
        await victim.client.call('GET', URL),
        await app.services.enterprises.groupPrefixEnabled(victim.partner.uuid),
      ];
      const routes: Probe[] = [
        ['GET', URL],
        ['POST', URL, { description: 'mine', group_prefix_enable: false }],
      ];
      await unchangedBy(read, async () => {
        await expectStatus(attacker.client, routes, 'ok');
        await expectLockedOut(app, routes, plain);
        await expectStatus(
          victim.client,
          [
            ['POST', URL, { description: 'x'.repeat(201) }],
            ['POST', URL, { group_prefix_enable: 'no' }],
            ['POST', URL, { description: null }],
          ],
          'wrong-syntax',
        );
        await expectStatus(victim.client, [['POST', URL, { description: HUGE }]], 'too-large');
      });
      // The attacker's own settings are what it wrote, nothing of the victim's.
      assert.deepEqual((await attacker.client.call('GET', URL)).enterprise, {
        description: 'mine',
        group_prefix_enable: false,
      });
    });
  });
}
