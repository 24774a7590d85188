/**
 * Dialplans (spec "Dialplan v2", "Legacy dialplan and call features") as an attacker with a
 * session of their own sees them: another user's dialplan and SIP accounts are wrong-* on every
 * route and stay as they were, nothing shows in the attacker's lists or events; without a login
 * every route is no-auth; bad input changes nothing; the legacy pools stay bounded over many
 * calls. The other bounds (100 dialplans, 64 KB each, 101 pool entries at once) are in
 * dialplan.test.ts.
 */
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import {
  expectLockedOut,
  expectStatus,
  HUGE,
  NOBODY,
  type Probe,
  seesNothingOf,
  unchangedBy,
} from '../../../test/security-telephony.js';

for (const dialect of DIALECTS) {
  describe(`dialplan as an attacker sees it (${dialect})`, () => {
    test('another user, no login, bad input: the statuses, and the owner sees the dialplans unchanged', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: other } = await loggedInClient(app);
      const sip = (await client.call('POST', '/api/sip', { password: 'sip-secret' })).user as string;
      await app.services.phones.addNumber('+4930700001', { userUuid: user.uuid }, false);
      await app.services.phones.setSwitches('+4930700001', { dialplan_enable: true });
      const dialplan = { description: 'secret plan', profiles: [{ parallel: { targets: [sip] } }] };
      const uuid = (await client.call('POST', '/api/dialplan/v2', { dialplan })).uuid as string;
      await client.call('POST', '/api/dialplan', { action: 'sip', sip, cti_via: '+4917011' });
      const read = async () => [
        await client.call('GET', `/api/dialplan/v2/${uuid}`),
        await client.call('GET', '/api/dialplan/v2'),
        await client.call('GET', '/api/dialplan'),
        await client.call('POST', `/api/dialplan/v2/${uuid}/simulate`, { caller: '+4930111' }),
        await app.services.dialplans.pendingCallThrough(user.uuid),
        await app.services.dialplans.findCallbackRequest(user.uuid),
      ];
      const v2 = (body: unknown): Probe[] => [
        ['GET', `/api/dialplan/v2/${uuid}`],
        ['POST', `/api/dialplan/v2/${uuid}`, body],
        ['DELETE', `/api/dialplan/v2/${uuid}`],
        ['DELETE', `/api/dialplan/v2/${uuid}?purge`],
        ['POST', `/api/dialplan/v2/${uuid}/simulate`, { caller: '+4930111' }],
      ];
      await unchangedBy(read, async () => {
        await expectStatus(other, v2({ dialplan: {} }), 'wrong-dialplan');
        // The victim's SIP account and number are not the attacker's to use.
        await expectStatus(
          other,
          [
            ['POST', '/api/dialplan/v2', { dialplan: { profiles: [{ parallel: { targets: [sip] } }] } }],
            ['POST', '/api/dialplan', { sip }],
            ['POST', '/api/dialplan', { sip_pool: { add: [sip] } }],
          ],
          'wrong-sip',
        );
        await expectStatus(
          other,
          [['POST', '/api/dialplan/callback', { from: '+4930700001', to: '+4989123' }]],
          'wrong-phone',
        );
        const everyRoute: Probe[] = [
          ...v2({ dialplan: {} }),
          ['GET', '/api/dialplan/v2'],
          ['POST', '/api/dialplan/v2', { dialplan: {} }],
          ['GET', '/api/dialplan'],
          ['POST', '/api/dialplan', { sip: '' }],
          ['POST', '/api/dialplan/callthrough', { phone: '+4930111' }],
          ['POST', '/api/dialplan/callback', { from: '+4930700001', to: '+4989123' }],
          ['POST', '/api/dialplan/callreverse', { filter: '+4930123' }],
        ];
        await expectLockedOut(app, everyRoute);
        await expectStatus(
          client,
          [
            ['GET', '/api/dialplan/v2/not-a-uuid'],
            ['DELETE', '/api/dialplan/v2/not-a-uuid'],
            ['POST', `/api/dialplan/v2/${uuid}`, { dialplan: { description: 'x'.repeat(201) } }],
            ['POST', `/api/dialplan/v2/${uuid}`, { dialplan: { profiles: 'all' } }],
            [
              'POST',
              `/api/dialplan/v2/${uuid}`,
              { dialplan: { profiles: [{ filter: { caller: 'x'.repeat(501) }, reject: {} }] } },
            ],
            ['POST', '/api/dialplan', { sip: 42 }],
            ['POST', '/api/dialplan', { cti_via: '0171' }],
            ['POST', '/api/dialplan/callthrough', { phone: '+1' }],
            ['POST', '/api/dialplan/callback', { from: '+4930700001', to: 'x'.repeat(30) }],
          ],
          'wrong-syntax',
        );
        await expectStatus(
          client,
          [['POST', `/api/dialplan/v2/${uuid}`, { dialplan: { description: HUGE } }]],
          'too-large',
        );
        await expectStatus(client, [['GET', `/api/dialplan/v2/${NOBODY}`]], 'wrong-dialplan');
      });
      await seesNothingOf(other, ['/api/dialplan/v2', '/api/dialplan'], [uuid, 'secret plan', sip]);
    });

    test('the legacy pools hold at most 100 entries however many calls add them', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const numbers = Array.from({ length: 101 }, (_, i) => `+49301${i + 100}`);
      const add = (from: number, to: number): Probe => [
        'POST',
        '/api/dialplan',
        { phone_pool: { add: Object.fromEntries(numbers.slice(from, to).map((n) => [n, true])) } },
      ];
      await expectStatus(client, [add(0, 50), add(50, 100)], 'ok');
      await unchangedBy(
        () => client.call('GET', '/api/dialplan'),
        () =>
          expectStatus(
            client,
            [['POST', '/api/dialplan', { phone_pool: { add: { [numbers[100] as string]: false } } }]],
            'too-large',
          ),
      );
      // Overwriting an entry that is there already stays within the bound.
      await expectStatus(
        client,
        [['POST', '/api/dialplan', { phone_pool: { add: { [numbers[0] as string]: false } } }]],
        'ok',
      );
    });
  });
}
