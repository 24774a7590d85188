/**
 * Call filters (spec "Partner API", callfilter) as an attacker sees them: another partner, a
 * user's session or no login cannot read, replace, delete or simulate a partner user's filter,
 * and the owner partner reads it back unchanged; bad input and more than 250 operators change
 * nothing.
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

const FILTER = [{ type: 'match', key: '^\\+49900', pass: false }];

for (const dialect of DIALECTS) {
  describe(`call filters as an attacker sees them (${dialect})`, () => {
    test('another partner, a user session, no login, bad input, too many operators: the filter is unchanged', async (t) => {
      const app = await build(t, { dialect });
      const { victim, attacker, user, theirs, plain } = await twoPartners(app, ['callfilter']);
      const url = `/api/partner/callfilter/${user.uuid}`;
      await expectStatus(victim.client, [['POST', url, { callfilter: FILTER }]], 'ok');
      const read = async () => [
        await victim.client.call('GET', url),
        await app.services.callFilters.callFilterOf(user.uuid),
      ];
      const routes = (target: string): Probe[] => [
        ['GET', `/api/partner/callfilter/${target}`],
        [
          'POST',
          `/api/partner/callfilter/${target}`,
          { callfilter: [{ type: 'match', key: '.', pass: true }] },
        ],
        ['DELETE', `/api/partner/callfilter/${target}`],
        ['POST', `/api/partner/callfilter/${target}/simulate`, { destination: '+4990012', service: 'sip' }],
      ];
      await unchangedBy(read, async () => {
        await expectStatus(attacker.client, routes(user.uuid), 'wrong-user');
        await expectStatus(victim.client, [...routes(theirs.uuid), ...routes(NOBODY)], 'wrong-user');
        await expectLockedOut(app, routes(user.uuid), plain);
        await expectStatus(
          victim.client,
          [
            ['GET', '/api/partner/callfilter/not-a-uuid'],
            ['POST', url, { callfilter: 'all' }],
            ['POST', url, { callfilter: [{ type: 'match', key: 1, pass: true }] }],
            ['POST', url, { callfilter: [{ type: 'jump', key: '.' }] }],
            ['POST', `${url}/simulate`, { destination: 'x'.repeat(65), service: 'sip' }],
          ],
          'wrong-syntax',
        );
        const many = Array.from({ length: 251 }, () => ({ type: 'match', key: '^\\+1', pass: true }));
        await expectStatus(
          victim.client,
          [
            ['POST', url, { callfilter: many }],
            ['POST', url, { callfilter: [{ type: 'match', key: HUGE, pass: true }] }],
          ],
          'too-large',
        );
      });
    });
  });
}
