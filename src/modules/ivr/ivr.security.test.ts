/**
 * IVRs (spec "IVR") as an attacker with a session of their own sees them: another user's IVR is
 * wrong-ivr on every route and stays as it was, nothing of it shows in the attacker's list,
 * paging or events; without a login every route is no-auth; bad input changes nothing.
 * The per-user bound (100 IVRs) is tested in ivr.test.ts.
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
  describe(`ivr as an attacker sees it (${dialect})`, () => {
    test('another user, no login, bad input: the statuses, and the owner sees the IVR unchanged', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const { client: other } = await loggedInClient(app);
      const ann = (await client.call('POST', '/api/announcement', {})).uuid as string;
      const otherAnn = (await other.call('POST', '/api/announcement', {})).uuid as string;
      const menu = { description: 'secret menu', announcement: ann, '1': '+4930111', other: 'repeat' };
      const uuid = (await client.call('POST', '/api/ivr', menu)).uuid as string;
      const own = { description: 'x', announcement: otherAnn, '1': '+4930222' };
      const read = async () => [
        await client.call('GET', `/api/ivr/${uuid}`),
        await client.call('GET', '/api/ivr'),
        await client.call('POST', `/api/ivr/${uuid}/simulate`, { events: ['1'] }),
      ];
      const routes = (body: unknown): Probe[] => [
        ['GET', `/api/ivr/${uuid}`],
        ['POST', `/api/ivr/${uuid}`, body],
        ['DELETE', `/api/ivr/${uuid}`],
        ['DELETE', `/api/ivr/${uuid}?purge`],
        ['POST', `/api/ivr/${uuid}/simulate`, { events: ['1'] }],
      ];
      await unchangedBy(read, async () => {
        await expectStatus(other, routes(own), 'wrong-ivr');
        // A key of the attacker's own IVR may not run the victim's IVR.
        await expectStatus(other, [['POST', '/api/ivr', { ...own, '2': uuid }]], 'wrong-ivr');
        await expectLockedOut(app, [...routes(menu), ['GET', '/api/ivr'], ['POST', '/api/ivr', menu]]);
        await expectStatus(
          client,
          [
            ['GET', '/api/ivr/not-a-uuid'],
            ['DELETE', '/api/ivr/not-a-uuid'],
            ['POST', '/api/ivr/not-a-uuid', menu],
            ['GET', '/api/ivr?count=501'],
            ['GET', '/api/ivr?count=0'],
            ['GET', `/api/ivr?start=${'x'.repeat(101)}`],
            ['POST', `/api/ivr/${uuid}`, { ...menu, description: 1 }],
            ['POST', `/api/ivr/${uuid}`, { ...menu, description: 'x'.repeat(201) }],
            ['POST', `/api/ivr/${uuid}`, { ...menu, announcement: 'not-a-uuid' }],
            ['POST', `/api/ivr/${uuid}`, { ...menu, '1': ['+4930111'] }],
            ['POST', `/api/ivr/${uuid}/simulate`, { events: 'x' }],
          ],
          'wrong-syntax',
        );
        await expectStatus(
          client,
          [['POST', `/api/ivr/${uuid}`, { ...menu, description: HUGE }]],
          'too-large',
        );
        await expectStatus(client, [['POST', `/api/ivr/${NOBODY}`, menu]], 'wrong-ivr');
      });
      await seesNothingOf(
        other,
        ['/api/ivr', `/api/ivr?start=${uuid}`, '/api/ivr?order=desc&count=500'],
        [uuid, 'secret menu'],
      );
    });
  });
}
