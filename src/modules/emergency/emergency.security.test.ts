/**
 * Emergency data (spec "Partner API", emergency) as an attacker sees it: another partner, a
 * user's session or no login cannot read or change a partner user's data, and the owner partner
 * reads it back unchanged; bad input changes nothing. One record of three bounded fields per
 * user is all a partner can keep here.
 */
import { describe, test } from 'node:test';
import { build, DIALECTS } from '../../../test/helper.js';
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
  describe(`emergency data as an attacker sees it (${dialect})`, () => {
    test('another partner, a user session, no login, bad input: the statuses, and the data is unchanged', async (t) => {
      const app = await build(t, { dialect });
      const { victim, attacker, user, theirs, plain } = await twoPartners(app, ['emergency']);
      const url = `/api/partner/emergency/${user.uuid}`;
      await expectStatus(
        victim.client,
        [['POST', url, { uui_header: 'secret', emergency_police: '0301100' }]],
        'ok',
      );
      const read = async () => [
        await victim.client.call('GET', url),
        await app.services.emergency.emergencyDataOf(user.uuid),
      ];
      const routes = (target: string): Probe[] => [
        ['GET', `/api/partner/emergency/${target}`],
        ['POST', `/api/partner/emergency/${target}`, { uui_header: 'mine', emergency_police: '' }],
      ];
      await unchangedBy(read, async () => {
        await expectStatus(attacker.client, routes(user.uuid), 'wrong-user');
        await expectStatus(victim.client, [...routes(theirs.uuid), ...routes(NOBODY)], 'wrong-user');
        await expectLockedOut(app, routes(user.uuid), plain);
        await expectStatus(
          victim.client,
          [
            ['GET', '/api/partner/emergency/not-a-uuid'],
            ['POST', url, { uui_header: 'u'.repeat(201) }],
            ['POST', url, { emergency_police: '12345678901' }],
            ['POST', url, { emergency_rescue: 112 }],
            ['POST', url, { emergency_rescue: ['112'] }],
          ],
          'wrong-syntax',
        );
        await expectStatus(victim.client, [['POST', url, { uui_header: HUGE }]], 'too-large');
      });
    });
  });
}
