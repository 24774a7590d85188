/**
 * The internal API (spec "Internal API") as an attacker sees it: every internal route is
 * access-denied for a user without its permission, even one holding all the other internal
 * permissions, and changes nothing; a partner's session or no login is no-auth; bad input from
 * a holder changes nothing. (The id card PDF answers 404: idcardcheck.test.ts.)
 */
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import {
  expectLockedOut,
  expectStatus,
  HUGE,
  NOBODY,
  type Probe,
  partnerClient,
  unchangedBy,
} from '../../../test/security-telephony.js';
import type { App } from '../../app.js';
import { INTERNAL_PERMISSIONS, type InternalPermission } from '../user/index.js';

const ROUTES: Record<InternalPermission, Probe[]> = {
  jeye: [
    ['GET', '/api/jeye/mon1.example.org'],
    ['POST', '/api/jeye/mon1.example.org', { data: { load: 1 } }],
  ],
  mwi: [
    ['GET', '/api/mwi/+4930501'],
    ['POST', '/api/mwi', { '+4930501': 'sip:thief@evil.example' }],
    ['DELETE', '/api/mwi/+4930501'],
  ],
  statistics: [['GET', '/api/statistics/2024-05-10']],
  usage: [['GET', '/api/usage/2024-05']],
  idcardcheck: [
    ['GET', '/api/idcardcheck'],
    ['GET', `/api/idcardcheck/${NOBODY}/address`],
    ['POST', `/api/idcardcheck/${NOBODY}`, { validation: 'ok' }],
  ],
};

async function holder(app: App, permissions: readonly InternalPermission[]) {
  const { client, user } = await loggedInClient(app);
  for (const permission of permissions) await app.services.users.grantPermission(user.uuid, permission);
  return client;
}

for (const dialect of DIALECTS) {
  describe(`internal API as an attacker sees it (${dialect})`, () => {
    test('each permission guards its routes alone: access-denied with all the others, no-auth for partners; nothing changes', async (t) => {
      const app = await build(t, { dialect });
      const all = await holder(app, INTERNAL_PERMISSIONS);
      await expectStatus(
        all,
        [
          ['POST', '/api/jeye/mon1.example.org', { data: { load: 7 } }],
          ['POST', '/api/mwi', { '+4930501': 'sip:box501@10.0.0.2:5070' }],
        ],
        'ok',
      );
      const read = async () => [
        await all.call('GET', '/api/jeye/mon1.example.org?count=5000'),
        await all.call('GET', '/api/mwi/+4930501'),
        await all.call('GET', '/api/idcardcheck'),
      ];
      const { client: partner } = await partnerClient(app, ['phone', 'usergroup']);
      await unchangedBy(read, async () => {
        for (const permission of INTERNAL_PERMISSIONS) {
          const others = await holder(
            app,
            INTERNAL_PERMISSIONS.filter((p) => p !== permission),
          );
          await expectStatus(others, ROUTES[permission], 'access-denied');
        }
        const everyRoute = Object.values(ROUTES).flat();
        // A user without any permission.
        await expectStatus(await holder(app, []), everyRoute, 'access-denied');
        await expectLockedOut(app, everyRoute, partner);
        await expectStatus(
          all,
          [
            ['GET', '/api/jeye/mon1.example.org?count=5001'],
            ['GET', '/api/mwi/0301'],
            ['POST', '/api/mwi', { '+4930501': 42 }],
            ['GET', '/api/statistics/2024-5-10'],
            ['GET', '/api/usage/May'],
            ['GET', '/api/idcardcheck/not-a-uuid/address'],
            ['POST', `/api/idcardcheck/${NOBODY}`, { validation: 'maybe' }],
          ],
          'wrong-syntax',
        );
        await expectStatus(
          all,
          [['POST', '/api/jeye/mon1.example.org', { data: { text: HUGE } }]],
          'too-large',
        );
      });
    });
  });
}
