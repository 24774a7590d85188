/**
 * Rules (spec "Rules") as an attacker with a session of their own sees them: another user's
 * rule is wrong-rule on every route and stays as it was, nothing of it shows in the attacker's
 * list or events; without a login every route is no-auth; bad input changes nothing; a user
 * keeps at most MAX_RULES rules.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import {
  expectLockedOut,
  expectStatus,
  HUGE,
  NOBODY,
  type Probe,
  seesNothingOf,
  unchangedBy,
} from '../../../test/security-telephony.js';
import { MAX_RULES } from './rule.service.js';

const rule = {
  name: 'Secret lights',
  initial_state: 'day',
  edges: [{ from: 'day', to: 'night', conditions: [{ type: 'timeout', value: 3600 }], actions: [] }],
  metadata: { room: 'hall' },
};

for (const dialect of DIALECTS) {
  describe(`rules as an attacker sees them (${dialect})`, () => {
    test('another user, no login, bad input: the statuses, and the owner sees the rule unchanged', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const { client: other } = await loggedInClient(app);
      const uuid = (await client.call('POST', '/api/rule', rule)).uuid as string;
      await newEvents(other);
      const read = async () => [
        await client.call('GET', `/api/rule/${uuid}`),
        await client.call('GET', '/api/rule'),
        await client.call('GET', `/api/rule/${uuid}/trace`),
      ];
      const routes: Probe[] = [
        ['GET', `/api/rule/${uuid}`],
        ['GET', `/api/rule/${uuid}/trace`],
        ['POST', `/api/rule/${uuid}`, { name: 'mine' }],
        ['POST', `/api/rule/${uuid}`, { active: false }],
        ['DELETE', `/api/rule/${uuid}`],
        ['DELETE', `/api/rule/${uuid}?purge`],
      ];
      await unchangedBy(read, async () => {
        await expectStatus(other, routes, 'wrong-rule');
        const everyRoute: Probe[] = [
          ...routes,
          ['GET', '/api/rule'],
          ['POST', '/api/rule', rule],
          ['POST', '/api/rule/dry-run', { rule }],
        ];
        await expectLockedOut(app, everyRoute);
        await expectStatus(
          client,
          [
            ['GET', '/api/rule/not-a-uuid'],
            ['DELETE', '/api/rule/not-a-uuid'],
            ['GET', '/api/rule?count=501'],
            ['POST', `/api/rule/${uuid}`, { name: 'x'.repeat(201) }],
            ['POST', `/api/rule/${uuid}`, { edges: 'all' }],
            ['POST', `/api/rule/${uuid}`, { active: 'yes' }],
            ['POST', '/api/rule/dry-run', { rule: { ...rule, edges: [] } }],
          ],
          'wrong-syntax',
        );
        await expectStatus(
          client,
          [
            ['POST', `/api/rule/${uuid}`, { metadata: { text: 'x'.repeat(6000) } }],
            ['POST', `/api/rule/${uuid}`, { name: HUGE }],
          ],
          'too-large',
        );
        await expectStatus(client, [['POST', `/api/rule/${NOBODY}`, { name: 'x' }]], 'wrong-rule');
      });
      assert.deepEqual(await newEvents(other), []);
      await seesNothingOf(other, ['/api/rule', `/api/rule?start=${uuid}`], [uuid, 'Secret lights']);
    });

    test(`a user keeps at most ${MAX_RULES} rules: the next is quota-exceeded and not stored`, async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      for (let i = 0; i < MAX_RULES; i++)
        await app.services.rules.createRule(user.uuid, { ...rule, name: `r${i}`, active: false });
      const count = async () =>
        Object.keys((await client.call('GET', '/api/rule?count=500')).rule as object).length;
      await unchangedBy(count, () => expectStatus(client, [['POST', '/api/rule', rule]], 'quota-exceeded'));
      assert.equal(await count(), MAX_RULES);
      // Another user is not affected by the first one's rules.
      const { client: other } = await loggedInClient(app);
      await expectStatus(other, [['POST', '/api/rule', rule]], 'ok');
    });
  });
}
