/**
 * Call detail records as an attacker sees them: another partner, the user itself, a
 * session that never logged in and none at all reach no partner's CDR list, CDR stream or calls;
 * what the partner reads stays the same, and another partner's CDR stream shows nothing of them.
 * CDRs are written by the call engine, not by clients; a list answers at most 5000
 * (partner-stream.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildUser, Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import * as security from '../../../test/security.js';

for (const dialect of DIALECTS) {
  describe(`cdr security (${dialect})`, () => {
    test("another partner, the user and sessions without login reach none of a partner's CDRs", async (t) => {
      const app = await build(t, { dialect });
      const owner = await security.partnerParty(app, ['phone', 'cdr']);
      const attacker = await security.partnerParty(app, ['phone', 'cdr']);
      const user = await buildUser(app, { partnerUuid: owner.uuid });
      await app.services.phones.addNumber('+4930100', { partnerUuid: owner.uuid, userUuid: user.uuid });
      const record = () =>
        app.services.cdrs.record({
          date: Date.now(),
          service: 'call',
          a_number: '+4930999',
          phone: '+4930100',
          owner: user.uuid,
        });
      const first = await record();
      assert.equal((await attacker.client.call('GET', '/api/partner/cdr/event')).status, 'ok');
      const watch = {
        watcher: owner.client,
        reads: ['/api/partner/cdr/+4930100?count=5000', `/api/partner/user/${user.uuid}/calls`],
      };
      const routes: security.Call[] = [
        ['GET', '/api/partner/cdr/+4930100'],
        ['GET', `/api/partner/user/${user.uuid}/calls`],
      ];
      await security.expectRefused(
        attacker.client,
        [
          ['GET', '/api/partner/cdr/+4930100?count=5000', undefined, 'wrong-phone'],
          ['GET', `/api/partner/user/${user.uuid}/calls`, undefined, 'wrong-user'],
        ],
        watch,
      );
      const { client: plain } = await loggedInClient(app);
      const everything: security.Call[] = [
        ...routes,
        ['GET', '/api/partner/cdr/event'],
        ['DELETE', '/api/partner/cdr/event'],
      ];
      await security.expectRefused(
        plain,
        everything.map(([method, url]) => [method, url, undefined, 'no-auth'] as const),
        watch,
      );
      const anonymous = new Client(app);
      await anonymous.open();
      await security.expectNoAuth(anonymous, everything, watch);
      const second = await record();
      await app.services.partnerStreams.idle();
      await security.expectNoLeak(attacker.client, [], [first.id, second.id, user.uuid, '+4930100']);
    });
  });
}
