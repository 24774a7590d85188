/**
 * Sign-up as an attacker sees it: partner sessions request keys without a captcha, so
 * a partner holds at most PARTNER_VERIFICATION_MAX unused keys; every route needs a session, and
 * a logged-in user cannot spend a key. Bad input, guessing and captcha throttles, hardware code
 * uses: signup.test.ts and recovery.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, Client, DIALECTS, download } from '../../../test/helper.js';
import { expectRefused, parties, partnerParty } from '../../../test/security.js';
import type { App } from '../../app.js';
import { hashSecretCode } from '../user/index.js';
import * as repo from './signup.repository.js';
import { PARTNER_VERIFICATION_MAX } from './signup.service.js';

async function countKeys(app: App): Promise<number> {
  const row = await app.database.db
    .selectFrom('signup_verification')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

for (const dialect of DIALECTS) {
  describe(`signup security (${dialect})`, () => {
    test(`a partner holds at most ${PARTNER_VERIFICATION_MAX} unused keys (exceeded-limit); sessions and users`, async (t) => {
      const app = await build(t, { dialect });
      const a = await partnerParty(app);
      const b = await partnerParty(app);
      const now = Math.floor(Date.now() / 1000);
      for (let i = 1; i < PARTNER_VERIFICATION_MAX; i++) {
        await repo.insertVerification(app.database.db, {
          key_hash: hashSecretCode(`filler-${i}`),
          kind: 'partner',
          user_uuid: `6f1c1a40-0000-1000-8000-${String(i).padStart(12, '0')}`,
          email: null,
          partner_uuid: a.uuid,
          info: null,
          created: now,
          expires: now + 3600,
        });
      }
      const last = await a.client.call('POST', '/api/signup/verification', {});
      assert.equal(last.status, 'ok');
      const stored = await countKeys(app);
      assert.equal(stored, PARTNER_VERIFICATION_MAX);
      const over = await a.client.call('POST', '/api/signup/verification', { info: { x: 1 } });
      assert.equal(over.status, 'exceeded-limit');
      assert.equal(await countKeys(app), stored);
      // The bound is per partner.
      assert.equal((await b.client.call('POST', '/api/signup/verification', {})).status, 'ok');

      // A logged-in user cannot spend the key; it stays usable.
      const { owner, anonymous } = await parties(app);
      const key = last.verification as string;
      const watch = { watcher: anonymous, reads: [`/api/signup/verification/${key}`] };
      const signup = {
        username: 'mallory',
        firstname: 'M',
        lastname: 'M',
        password: 'secret-pw',
        verification: key,
      };
      await expectRefused(owner.client, [['POST', '/api/signup/user', signup, 'already-auth']], watch);
      // Without a session, nothing: no-session, and no captcha image.
      for (const [method, url, body] of [
        ['POST', '/api/signup/user', signup],
        ['GET', `/api/signup/verification/${key}`, undefined],
        ['DELETE', `/api/signup/verification/${key}`, undefined],
        ['POST', '/api/signup/verification', {}],
        ['POST', '/api/password/recovery', { username: owner.user.username, captcha: 'x' }],
        ['POST', '/api/password', { username: owner.user.username, code: '123456', password: 'new-pw-1' }],
      ] as const)
        assert.equal((await new Client(app).call(method, url, body)).status, 'no-session', url);
      assert.equal((await download(app, '/api/signup/captcha/a.png')).statusCode, 404);
      assert.equal((await anonymous.call('GET', `/api/signup/verification/${key}`)).status, 'ok');
    });
  });
}
