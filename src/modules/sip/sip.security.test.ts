/**
 * SIP accounts (spec "SIP accounts") as an attacker with a session of their own sees them:
 * another user's account is wrong-sip on every route and stays as it was (registration,
 * subscriptions, events), nothing of it shows in the attacker's list or events; without a login
 * every route is no-auth; bad input changes nothing. The bounds (SIP quota of the packs, BLF
 * subscriptions per account) are tested in sip.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import {
  expectLockedOut,
  expectStatus,
  HUGE,
  type Probe,
  registerSipAccount,
  seesNothingOf,
  unchangedBy,
} from '../../../test/security-telephony.js';

for (const dialect of DIALECTS) {
  describe(`sip as an attacker sees it (${dialect})`, () => {
    test('another user, no login, bad input: the statuses, and the owner sees the account unchanged', async (t) => {
      const app = await build(t, { dialect });
      const alice = await loggedInClient(app);
      const bob = await loggedInClient(app);
      const user = (await alice.client.call('POST', '/api/sip', { password: 'secret1', description: 'desk' }))
        .user as string;
      await registerSipAccount(app, dialect, user, '192.0.2.7:5062', Math.floor(Date.now() / 1000) + 300);
      const locations = () =>
        app.database.db
          .selectFrom('location')
          .select(['contact', 'expires'])
          .where('username', '=', user)
          .execute();
      await newEvents(alice.client);
      const read = async () => [
        await alice.client.call('GET', '/api/sip'),
        await alice.client.call('GET', `/api/sip/${user}/blf`),
        await locations(),
      ];
      const routes = (notify: unknown): Probe[] => [
        ['POST', `/api/sip/${user}`, { password: 'stolen', description: 'mine' }],
        ['POST', `/api/sip/${user}`, { domain: 'elsewhere.example' }],
        ['DELETE', `/api/sip/${user}`],
        ['POST', `/api/sip/${user}/notify`, notify],
        ['GET', `/api/sip/${user}/blf`],
        ['POST', `/api/sip/${user}/blf`, { subscribe: [], unsubscribe: [] }],
      ];
      await unchangedBy(read, async () => {
        await expectStatus(bob.client, routes({ 'event-string': 'check-sync' }), 'wrong-sip');
        const everyRoute: Probe[] = [
          ...routes({ 'event-string': 'check-sync' }),
          ['GET', '/api/sip'],
          ['POST', '/api/sip', { password: 'secret' }],
        ];
        await expectLockedOut(app, everyRoute);
        await expectStatus(
          alice.client,
          [
            ['POST', `/api/sip/${user}`, { password: 'abcd' }],
            ['POST', `/api/sip/${user}`, { password: 'x'.repeat(51) }],
            ['POST', `/api/sip/${user}`, { description: 'x'.repeat(101) }],
            ['POST', `/api/sip/${user}`, { description: 7 }],
            ['POST', `/api/sip/${user}/notify`, { 'event-string': 'x'.repeat(201) }],
            ['POST', `/api/sip/${user}/notify`, { 'event-string': 'e', content: 'x'.repeat(2501) }],
            ['POST', `/api/sip/${user}/notify`, { 'event-string': 'e', 'content-type': 'x'.repeat(201) }],
            ['POST', '/api/sip', { password: 'secret', domain: ['a'] }],
          ],
          'wrong-syntax',
        );
        await expectStatus(alice.client, [['POST', `/api/sip/${user}`, { description: HUGE }]], 'too-large');
        // A name of no account, well formed or not, is an unknown account.
        await expectStatus(
          alice.client,
          [
            ['POST', '/api/sip/Not_A_User/blf', {}],
            ['DELETE', '/api/sip/x'],
          ],
          'wrong-sip',
        );
        // The attacker's own accounts are named after the attacker, never after the victim.
        const own = (await bob.client.call('POST', '/api/sip', { password: 'secret2' })).user as string;
        assert.notEqual(own, user);
      });
      assert.deepEqual(await newEvents(alice.client), []);
      await seesNothingOf(bob.client, ['/api/sip'], [user, 'desk', '192.0.2.7']);
    });
  });
}
