/**
 * The partner API (spec "Partner API") as an attacker sees it: another partner cannot read or
 * change a partner's users, their numbers, recovery codes or CDRs, and nothing of them shows in
 * its lists or events; a user's session or no login reaches no partner route; a partner name
 * with another partner's key, or a proxy session for another partner's user, is refused; bad
 * input changes nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, Client, DIALECTS } from '../../../test/helper.js';
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
  describe(`partner API as an attacker sees it (${dialect})`, () => {
    test("another partner's users, numbers and CDRs: wrong-user / wrong-phone, unchanged, not listed", async (t) => {
      const app = await build(t, { dialect });
      const { victim, attacker, user, theirs, plain } = await twoPartners(app, ['phone', 'cdr']);
      await app.services.phones.addNumber('+4930600001', { partnerUuid: victim.partner.uuid });
      await app.services.phones.addNumber('+4930699999', { partnerUuid: attacker.partner.uuid });
      await expectStatus(
        victim.client,
        [['POST', `/api/partner/phone/${user.uuid}`, { create: { '+4930600001': { call_enable: true } } }]],
        'ok',
      );
      const read = async () => [
        await victim.client.call('GET', `/api/partner/user/${user.uuid}`),
        await victim.client.call('GET', `/api/partner/user/${user.uuid}/calls`),
        await victim.client.call('GET', '/api/partner/user'),
        await victim.client.call('GET', '/api/partner/phone'),
        await victim.client.call('GET', '/api/partner/cdr/+4930600001'),
        await app.services.users.findUser(user.uuid),
      ];
      const routes = (target: string): Probe[] => [
        ['GET', `/api/partner/user/${target}`],
        ['GET', `/api/partner/user/${target}/calls`],
        ['POST', `/api/partner/user/${target}`, { disabled: true }],
        ['POST', `/api/partner/user/${target}`, { deleted: true }],
        ['POST', `/api/partner/recovery/${target}`, {}],
        ['POST', `/api/partner/phone/${target}`, { delete: ['+4930600001'] }],
        ['POST', `/api/partner/phone/${target}`, { create: { '+4930699999': {} } }],
        ['GET', `/api/partner/user?start=${target}`],
      ];
      await unchangedBy(read, async () => {
        await expectStatus(attacker.client, routes(user.uuid), 'wrong-user');
        await expectStatus(victim.client, [...routes(theirs.uuid), ...routes(NOBODY)], 'wrong-user');
        // The victim's number, through the attacker's own user.
        await expectStatus(
          attacker.client,
          [
            [
              'POST',
              `/api/partner/phone/${theirs.uuid}`,
              { update: { '+4930600001': { call_enable: false } } },
            ],
            ['POST', `/api/partner/phone/${theirs.uuid}`, { delete: ['+4930600001'] }],
            ['GET', '/api/partner/cdr/+4930600001'],
          ],
          'wrong-phone',
        );
        const everyRoute: Probe[] = [
          ...routes(user.uuid),
          ['GET', '/api/partner/user'],
          ['GET', '/api/partner/phone'],
          ['GET', '/api/partner/user/event'],
          ['DELETE', '/api/partner/user/event'],
          ['GET', '/api/partner/cdr/event'],
          ['DELETE', '/api/partner/cdr/event'],
          ['GET', '/api/partner/cdr/+4930600001'],
        ];
        await expectLockedOut(app, everyRoute, plain);
        await expectStatus(
          victim.client,
          [
            ['GET', '/api/partner/user/not-a-uuid'],
            ['GET', '/api/partner/user?count=501'],
            ['GET', '/api/partner/phone?count=0'],
            ['GET', '/api/partner/cdr/+4930600001?count=5001'],
            ['GET', '/api/partner/cdr/0306'],
            ['GET', '/api/partner/user/event?timeout=36001'],
            ['POST', `/api/partner/user/${user.uuid}`, { country_code: '49' }],
            ['POST', `/api/partner/user/${user.uuid}`, { disabled: 'yes' }],
            ['POST', `/api/partner/phone/${user.uuid}`, { create: { '030': {} } }],
            ['POST', `/api/partner/phone/${user.uuid}`, { update: { '+4930600001': { call_enable: 1 } } }],
          ],
          'wrong-syntax',
        );
        await expectStatus(
          victim.client,
          [['POST', `/api/partner/phone/${user.uuid}`, { delete: [HUGE] }]],
          'too-large',
        );
      });
      await seesNothingOf(
        attacker.client,
        ['/api/partner/user', '/api/partner/phone?count=500'],
        [user.uuid, '+4930600001'],
      );
    });

    test("a partner name with another partner's key, and a proxy session for another partner's user, are refused", async (t) => {
      const app = await build(t, { dialect });
      const { victim, attacker, user } = await twoPartners(app, ['phone']);
      const client = new Client(app);
      await client.open();
      await expectStatus(
        client,
        [
          ['POST', '/api/session', { partner: victim.partner.name, key: `${attacker.partner.key}x` }],
          ['POST', '/api/session', { partner: victim.partner.name, key: 'wrong-key' }],
        ],
        'wrong-credentials',
      );
      await expectStatus(
        client,
        [
          [
            'POST',
            '/api/session',
            { partner: attacker.partner.name, key: attacker.partner.key, user: user.uuid },
          ],
        ],
        'wrong-user',
      );
      // Still not logged in: the partner routes stay closed.
      assert.equal((await client.call('GET', '/api/session')).auth, false);
      await expectStatus(client, [['GET', `/api/partner/user/${user.uuid}`]], 'no-auth');
    });
  });
}
