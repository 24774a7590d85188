/**
 * Caller names (CNAM, Zentrale's shape) as an attacker sees them: a user's name is their own; a
 * usergroup's name is its partner's: another partner, a user's session or no login cannot read
 * or change it, and the owner reads it back unchanged; bad input changes nothing. A user keeps
 * one name of at most 50 characters, a usergroup one.
 */
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import {
  expectLockedOut,
  expectStatus,
  HUGE,
  NOBODY,
  type Probe,
  twoPartners,
  unchangedBy,
} from '../../../test/security-telephony.js';

for (const dialect of DIALECTS) {
  describe(`caller names as an attacker sees them (${dialect})`, () => {
    test('another partner, a user session, no login, bad input: the names are unchanged', async (t) => {
      const app = await build(t, { dialect });
      const { victim, attacker, plain } = await twoPartners(app, ['usergroup']);
      const { client: owner } = await loggedInClient(app);
      const group = (await victim.client.call('POST', '/api/partner/usergroup', { description: 'g' }))
        .group_uuid as string;
      const url = `/api/partner/usergroup/${group}/cnam`;
      await expectStatus(victim.client, [['POST', url, { cnam: 'Secret Group' }]], 'ok');
      await expectStatus(owner, [['POST', '/api/user/cnam', { cnam: 'Secret Ada' }]], 'ok');
      const read = async () => [
        await victim.client.call('GET', url),
        await owner.call('GET', '/api/user/cnam'),
      ];
      const routes = (target: string): Probe[] => [
        ['GET', `/api/partner/usergroup/${target}/cnam`],
        ['POST', `/api/partner/usergroup/${target}/cnam`, { cnam: 'Mine' }],
      ];
      await unchangedBy(read, async () => {
        await expectStatus(attacker.client, routes(group), 'wrong-usergroup');
        await expectStatus(victim.client, routes(NOBODY), 'wrong-usergroup');
        await expectLockedOut(app, routes(group), plain);
        await expectLockedOut(app, [
          ['GET', '/api/user/cnam'],
          ['POST', '/api/user/cnam', { cnam: 'Mine' }],
        ]);
        // The user routes act on the caller's own name only: another user's is out of reach.
        await expectStatus(plain, [['GET', '/api/user/cnam']], 'ok');
        await expectStatus(
          victim.client,
          [
            ['GET', '/api/partner/usergroup/not-a-uuid/cnam'],
            ['POST', url, { cnam: 'x'.repeat(51) }],
            ['POST', url, { cnam: 5 }],
          ],
          'wrong-syntax',
        );
        await expectStatus(owner, [['POST', '/api/user/cnam', { cnam: 'x'.repeat(51) }]], 'wrong-syntax');
        await expectStatus(owner, [['POST', '/api/user/cnam', { cnam: HUGE }]], 'too-large');
      });
    });
  });
}
