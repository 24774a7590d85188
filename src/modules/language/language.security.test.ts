/**
 * GET /api/language as an attacker sees it: it needs no session (access none), so it
 * answers the same list to anyone, keeps nothing, and takes no input; other methods are unknown.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, Client, DIALECTS } from '../../../test/helper.js';
import { HUGE, parties } from '../../../test/security.js';

for (const dialect of DIALECTS) {
  describe(`language security (${dialect})`, () => {
    test('the same answer without a session, with any session and any query; no other method', async (t) => {
      const app = await build(t, { dialect });
      const { owner, anonymous } = await parties(app);
      const expected = { status: 'ok', language: ['de', 'en'] };
      for (const client of [new Client(app), anonymous, owner.client]) {
        assert.deepEqual(await client.call('GET', '/api/language'), expected);
        assert.deepEqual(await client.call('GET', `/api/language?x=${HUGE.slice(0, 2000)}`), expected);
      }
      // Nothing is kept: no session comes of it.
      const sessions = app.services.sessions.count;
      for (let i = 0; i < 10; i++) await new Client(app).call('GET', '/api/language');
      assert.equal(app.services.sessions.count, sessions);
      for (const method of ['POST', 'DELETE'] as const) {
        const response = await app.server.inject({ method, url: '/api/language', payload: {} });
        assert.equal(response.json().status, 'fail');
      }
    });
  });
}
