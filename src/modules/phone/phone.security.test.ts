/**
 * Phone numbers (spec "Partner API" phone settings; Zentrale's user routes) as an attacker sees
 * them: another user's number is wrong-phone on every route and stays as it was; the victim's
 * dialplans and IVRs cannot answer the attacker's number; a user cannot set the partner
 * switches of their own number; nothing of the victim shows in the attacker's list or events;
 * without a login every route is no-auth; bad input changes nothing. A user keeps settings only
 * for numbers given to them, so the settings are bounded by the numbers.
 */
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import {
  expectLockedOut,
  expectStatus,
  HUGE,
  type Probe,
  seesNothingOf,
  unchangedBy,
} from '../../../test/security-telephony.js';

for (const dialect of DIALECTS) {
  describe(`phone numbers as an attacker sees them (${dialect})`, () => {
    test('another user, partner switches, no login, bad input: the statuses, and the numbers are unchanged', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: other, user: otherUser } = await loggedInClient(app);
      const { phones } = app.services;
      await phones.addNumber('+4930800001', { userUuid: user.uuid }, false);
      await phones.addNumber('+4930800002', { userUuid: otherUser.uuid }, false);
      const ann = (await client.call('POST', '/api/announcement', {})).uuid as string;
      const dialplan = (await client.call('POST', '/api/dialplan/v2', { dialplan: {} })).uuid as string;
      const ivr = (
        await client.call('POST', '/api/ivr', { description: 'm', announcement: ann, '1': '+4930111' })
      ).uuid as string;
      await expectStatus(
        client,
        [
          [
            'POST',
            '/api/phone',
            { phone: { '+4930800001': { dialplan, notification_email: 'me@example.com' } } },
          ],
        ],
        'ok',
      );
      const read = async () => [
        await client.call('GET', '/api/phone'),
        await other.call('GET', '/api/phone'),
        await client.call('POST', '/api/phone/+4930800001/simulate', { caller: '+4930111' }),
        await phones.findNumber('+4930800001'),
        await phones.findNumber('+4930800002'),
      ];
      const set = (number: string, change: object): Probe => [
        'POST',
        '/api/phone',
        { phone: { [number]: change } },
      ];
      await unchangedBy(read, async () => {
        await expectStatus(
          other,
          [
            set('+4930800001', { ivr: '' }),
            set('+4930800001', { notification_email: 'thief@example.com' }),
            // All numbers change or none: the attacker's own number does not change either.
            [
              'POST',
              '/api/phone',
              { phone: { '+4930800002': { announcement: '' }, '+4930800001': { dialplan: '' } } },
            ],
            ['POST', '/api/phone/+4930800001/simulate', { caller: '+4930111' }],
          ],
          'wrong-phone',
        );
        await expectStatus(other, [set('+4930800002', { dialplan })], 'wrong-dialplan');
        await expectStatus(other, [set('+4930800002', { ivr })], 'wrong-ivr');
        await expectStatus(other, [set('+4930800002', { announcement: ann })], 'wrong-announcement');
        // The partner switches are the partner's: a user's attempt changes nothing.
        await expectStatus(
          other,
          [set('+4930800002', { dialplan_enable: true, call_enable: true, fax_enable: false })],
          'ok',
        );
        await expectLockedOut(app, [
          ['GET', '/api/phone'],
          set('+4930800001', { dialplan: '' }),
          ['POST', '/api/phone/+4930800001/simulate', { caller: '+4930111' }],
        ]);
        await expectStatus(
          client,
          [
            set('030800001', { dialplan: '' }),
            set('+4930800001', { dialplan: 'not-a-uuid' }),
            set('+4930800001', { dialplan, ivr }),
            set('+4930800001', { notification_email: 'not-an-address' }),
            set('+4930800001', { notification_attachment: 'yes' }),
            ['POST', '/api/phone', { phone: [] }],
            ['POST', '/api/phone/+4930800001/simulate', { caller: 'x'.repeat(65) }],
            ['POST', '/api/phone/0308/simulate', { caller: '+4930111' }],
          ],
          'wrong-syntax',
        );
        await expectStatus(client, [set('+4930800001', { notification_email: HUGE })], 'too-large');
      });
      await seesNothingOf(other, ['/api/phone'], ['+4930800001', dialplan, 'me@example.com']);
    });
  });
}
