/**
 * Usergroups (spec "Partner API", usergroup) as an attacker sees them: another partner, a user's
 * session or no login cannot read or change a partner's group, its members, credit, extensions,
 * limit or zones, nor put its own users into it or the victim's users into its own; the owner
 * reads everything back unchanged and nothing shows in the attacker's list; bad input changes
 * nothing. The bound of 1000 usergroups per partner is tested in usergroup.test.ts.
 */
import { describe, test } from 'node:test';
import { build, DIALECTS } from '../../../test/helper.js';
import {
  expectLockedOut,
  expectStatus,
  HUGE,
  NOBODY,
  type Probe,
  seesNothingOf,
  twoPartners,
  unchangedBy,
} from '../../../test/security-telephony.js';

for (const dialect of DIALECTS) {
  describe(`usergroups as an attacker sees them (${dialect})`, () => {
    test('another partner, a user session, no login, bad input: the statuses, and the group is unchanged', async (t) => {
      const app = await build(t, { dialect });
      const { victim, attacker, user, theirs, plain } = await twoPartners(app, ['usergroup']);
      const create = { description: 'secret group', prefix: 3 };
      const group = (await victim.client.call('POST', '/api/partner/usergroup', create)).group_uuid as string;
      const own = (await attacker.client.call('POST', '/api/partner/usergroup', { description: 'a' }))
        .group_uuid as string;
      const base = `/api/partner/usergroup/${group}`;
      await expectStatus(
        victim.client,
        [
          ['POST', `${base}/user`, { users: { add: [user.uuid] } }],
          ['POST', `${base}/credit`, { credit: 50 }],
          ['POST', `${base}/limit`, { calls: 3 }],
          ['POST', `${base}/zonefilter`, { zones: ['+49'] }],
        ],
        'ok',
      );
      const reads = ['', '/user', '/credit', '/extension', '/limit', '/zonefilter'];
      const read = async () => [
        await victim.client.call('GET', '/api/partner/usergroup'),
        ...(await Promise.all(reads.slice(1).map((path) => victim.client.call('GET', `${base}${path}`)))),
        await app.services.usergroups.usergroupOf(user.uuid),
      ];
      const routes = (uuid: string): Probe[] => [
        ['POST', `/api/partner/usergroup/${uuid}`, { description: 'mine', prefix: 0 }],
        ['DELETE', `/api/partner/usergroup/${uuid}`],
        ['POST', `/api/partner/usergroup/${uuid}/user`, { users: { delete: [user.uuid] } }],
        ['POST', `/api/partner/usergroup/${uuid}/user`, { users: { add: [theirs.uuid] } }],
        ['POST', `/api/partner/usergroup/${uuid}/credit`, { credit: 0 }],
        ['POST', `/api/partner/usergroup/${uuid}/extension`, { extensions: { [user.uuid]: '' } }],
        ['POST', `/api/partner/usergroup/${uuid}/limit`, { calls: 0 }],
        ['POST', `/api/partner/usergroup/${uuid}/zonefilter`, { zones: [] }],
        ...reads.slice(1).map((path): Probe => ['GET', `/api/partner/usergroup/${uuid}${path}`]),
      ];
      await unchangedBy(read, async () => {
        await expectStatus(attacker.client, routes(group), 'wrong-usergroup');
        await expectStatus(victim.client, routes(NOBODY), 'wrong-usergroup');
        // The victim's user is not the attacker's to group.
        await expectStatus(
          attacker.client,
          [['POST', `/api/partner/usergroup/${own}/user`, { users: { add: [user.uuid] } }]],
          'wrong-user',
        );
        await expectLockedOut(
          app,
          [...routes(group), ['GET', '/api/partner/usergroup'], ['POST', '/api/partner/usergroup', create]],
          plain,
        );
        await expectStatus(
          victim.client,
          [
            ['GET', '/api/partner/usergroup/not-a-uuid/user'],
            ['DELETE', '/api/partner/usergroup/not-a-uuid'],
            ['POST', base, { description: 'x'.repeat(201) }],
            ['POST', base, { prefix: 10 }],
            ['POST', `${base}/credit`, { credit: -1 }],
            ['POST', `${base}/credit`, { credit: '5' }],
            ['POST', `${base}/limit`, { calls: 1.5 }],
            ['POST', `${base}/zonefilter`, { zones: ['49'] }],
            ['POST', `${base}/user`, { users: { add: ['not-a-uuid'] } }],
            ['POST', `${base}/extension`, { extensions: { 'not-a-uuid': '12' } }],
          ],
          'wrong-syntax',
        );
        await expectStatus(victim.client, [['POST', base, { description: HUGE }]], 'too-large');
      });
      await seesNothingOf(attacker.client, ['/api/partner/usergroup'], [group, 'secret group']);
    });
  });
}
