/**
 * The account as an attacker sees it: a changed or reset password ends the account's other
 * sessions on every node; e-mail change codes do not tell registered addresses and are throttled.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkParameter, startMailbox } from '../../../test/mailbox.js';

for (const dialect of DIALECTS) {
  describe(`password changes end other sessions (${dialect})`, () => {
    test('POST /api/user with a new password keeps the calling session and ends the others', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const other = new Client(app);
      await other.login(user.username, user.password);
      const { client: bystander } = await loggedInClient(app);
      const answer = await client.call('POST', '/api/user', {
        old_password: user.password,
        password: 'brand-new-pw',
      });
      assert.equal(answer.status, 'ok');
      assert.equal((await client.call('GET', '/api/session')).auth, true);
      assert.equal((await other.call('GET', '/api/session')).status, 'wrong-session');
      assert.equal((await bystander.call('GET', '/api/session')).auth, true);
      // The stored rows went too: a restart does not bring the session back.
      const rows = await app.database.db
        .selectFrom('session')
        .select('did')
        .where('user_uuid', '=', user.uuid)
        .execute();
      assert.equal(rows.length, 1);
    });

    test('a wrong old password ends nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const other = new Client(app);
      await other.login(user.username, user.password);
      const answer = await client.call('POST', '/api/user', {
        old_password: 'wrong-pw',
        password: 'new-pw-1',
      });
      assert.equal(answer.status, 'wrong-password');
      assert.equal((await other.call('GET', '/api/session')).auth, true);
    });

    test('POST /api/password (recovery) ends the sessions that were open', async (t) => {
      const app = await build(t, { dialect });
      const { client: old, user } = await loggedInClient(app);
      const code = await app.services.recovery.issueRecoveryCode(user.uuid);
      const client = new Client(app);
      await client.open();
      const answer = await client.call('POST', '/api/password', {
        username: user.username,
        code,
        password: 'brand-new-pw',
      });
      assert.equal(answer.status, 'ok');
      assert.equal((await client.call('GET', '/api/session')).auth, true);
      assert.equal((await old.call('GET', '/api/session')).status, 'wrong-session');
    });
  });
}

describe('e-mail change codes', () => {
  test('an address in use answers like a free one, mails nothing, and no code makes it the address', async (t) => {
    const mailbox = await startMailbox(t);
    const app = await build(t, { env: { SMTP_URL: mailbox.url } });
    const { client, user } = await loggedInClient(app);
    const { user: taken } = await loggedInClient(app);
    const free = await client.call('POST', '/api/user', { email: 'free@example.com' });
    const used = await client.call('POST', '/api/user', { email: taken.email! });
    assert.deepEqual(used, free);
    assert.deepEqual(
      mailbox.mails.map((mail) => mail.to),
      [['free@example.com']],
    );
    // The older code was replaced by the request, as after a mailed one.
    const code = linkParameter(mailbox.last('free@example.com'), 'code');
    assert.equal((await client.call('POST', '/api/user', { code })).status, 'wrong-code');
    assert.equal((await app.services.users.findUser(user.uuid))?.email, user.email);
  });

  test('mails are throttled per account and per recipient', async (t) => {
    const mailbox = await startMailbox(t);
    const app = await build(t, { env: { SMTP_URL: mailbox.url } });
    const { client } = await loggedInClient(app);
    for (let i = 0; i < 5; i++)
      assert.equal((await client.call('POST', '/api/user', { email: `a${i}@example.com` })).status, 'ok');
    assert.equal(
      (await client.call('POST', '/api/user', { email: 'a9@example.com' })).status,
      'resource-throttle',
    );
    assert.equal(mailbox.mails.length, 5);
    // One victim address, many accounts.
    for (let i = 0; i < 5; i++) {
      const { client: sender } = await loggedInClient(app);
      assert.equal((await sender.call('POST', '/api/user', { email: 'victim@example.com' })).status, 'ok');
    }
    const { client: sender } = await loggedInClient(app);
    assert.equal(
      (await sender.call('POST', '/api/user', { email: 'Victim@example.com' })).status,
      'resource-throttle',
    );
    assert.equal(mailbox.to('victim@example.com').length, 5);
  });
});
