import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { build, buildPartner, buildUser, Client, DIALECTS, type Dialect } from '../../../test/helper.js';
import { linkParameter, startMailbox } from '../../../test/mailbox.js';
import type { App } from '../../app.js';

const TEST_ANSWER = 'TestAnswer42';

async function setup(t: TestContext, dialect: Dialect) {
  const mailbox = await startMailbox(t);
  const app = await build(t, { dialect, env: { SMTP_URL: mailbox.url, CAPTCHA_TEST_ANSWER: TEST_ANSWER } });
  return { app, mailbox };
}

async function serveCaptcha(client: Client): Promise<void> {
  const answer = await client.app.server.inject({
    url: '/api/signup/captcha/c.png',
    headers: { authorization: `Bearer ${client.sid}` },
  });
  assert.equal(answer.statusCode, 200);
}

async function anonymous(app: App, language?: string): Promise<Client> {
  const client = new Client(app);
  await client.open(language);
  return client;
}

async function requestCode(client: Client, login: Record<string, string>) {
  await serveCaptcha(client);
  return client.call('POST', '/api/password/recovery', { ...login, captcha: TEST_ANSWER });
}

async function codeCount(app: App): Promise<number> {
  return (await app.database.db.selectFrom('account_code').select('code_hash').execute()).length;
}

for (const dialect of DIALECTS) {
  describe(`password recovery (${dialect})`, () => {
    test('a mailed code replaces the password, is used up, and authenticates the session', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const user = await buildUser(app);
      const client = await anonymous(app, 'en');
      assert.deepEqual(await requestCode(client, { username: user.username }), { status: 'ok' });
      const mail = mailbox.last(user.email!);
      assert.equal(mail.subject, 'Reset your password');
      const code = linkParameter(mail, 'code');
      assert.match(code, /^[A-Za-z0-9]{24}$/);
      assert.ok(mail.text.includes(`Code: ${code}`));
      assert.ok(mail.text.includes(`Hello ${user.username},`));
      assert.ok(mail.html.includes(`code=${code}`));

      const answer = await client.call('POST', '/api/password', {
        username: user.username,
        code,
        password: 'brand-new-pw',
      });
      assert.deepEqual(answer, { status: 'ok' });
      assert.equal((await client.call('GET', '/api/session')).auth, true);
      assert.equal(((await client.call('GET', '/api/user')).user as { uuid: string }).uuid, user.uuid);

      const login = await anonymous(app);
      assert.equal(
        (await login.call('POST', '/api/session', { username: user.username, password: user.password }))
          .status,
        'wrong-credentials',
      );
      assert.equal(
        (await login.call('POST', '/api/session', { username: user.username, password: 'brand-new-pw' }))
          .status,
        'ok',
      );

      // Single use.
      const again = await anonymous(app);
      assert.equal(
        (await again.call('POST', '/api/password', { username: user.username, code, password: 'other-pw' }))
          .status,
        'wrong-username',
      );
      assert.equal(await codeCount(app), 0);
    });

    test('by e-mail address, in German by default', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const user = await buildUser(app);
      const client = await anonymous(app);
      assert.equal((await requestCode(client, { email: user.email!.toUpperCase() })).status, 'ok');
      const mail = mailbox.last(user.email!);
      assert.equal(mail.subject, 'Passwort zurücksetzen');
      const code = linkParameter(mail, 'code');
      assert.equal(
        (await client.call('POST', '/api/password', { email: user.email, code, password: 'neues-passwort' }))
          .status,
        'ok',
      );
    });

    test('wrong-captcha, captcha reset on every call, wrong-username, missing-element', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const user = await buildUser(app);
      const client = await anonymous(app);
      const recover = (body: Record<string, unknown>) => client.call('POST', '/api/password/recovery', body);
      assert.equal(
        (await recover({ username: user.username, captcha: TEST_ANSWER })).status,
        'wrong-captcha',
      );
      await serveCaptcha(client);
      assert.equal((await recover({ username: user.username, captcha: 'nope' })).status, 'wrong-captcha');
      assert.equal(
        (await recover({ username: user.username, captcha: TEST_ANSWER })).status,
        'wrong-captcha',
      );
      await serveCaptcha(client);
      assert.equal((await recover({ username: 'nobody', captcha: TEST_ANSWER })).status, 'wrong-username');
      assert.equal(
        (await recover({ username: user.username, captcha: TEST_ANSWER })).status,
        'wrong-captcha',
      );
      await serveCaptcha(client);
      assert.equal((await recover({ captcha: TEST_ANSWER })).status, 'missing-element');
      await serveCaptcha(client);
      assert.equal((await recover({ username: user.username })).status, 'missing-element');
      for (const body of [
        { username: 'a', captcha: TEST_ANSWER },
        { username: 'bad name', captcha: TEST_ANSWER },
        { email: 'no-address', captcha: TEST_ANSWER },
        { username: user.username, captcha: 'bad captcha' },
      ]) {
        await serveCaptcha(client);
        assert.equal((await recover(body)).status, 'wrong-syntax', JSON.stringify(body));
      }
      await serveCaptcha(client);
      await app.services.users.setDisabled(user.uuid, true);
      assert.equal(
        (await recover({ username: user.username, captcha: TEST_ANSWER })).status,
        'wrong-username',
      );
      assert.equal(mailbox.mails.length, 0);
      assert.equal(await codeCount(app), 0);
    });

    test('a mail that cannot be sent is email-failure and leaves no code', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const user = await buildUser(app);
      const mailless = await buildUser(app, { email: undefined });
      mailbox.refuse.add(user.email!);
      const client = await anonymous(app);
      assert.equal((await requestCode(client, { username: user.username })).status, 'email-failure');
      assert.equal((await requestCode(client, { username: mailless.username })).status, 'email-failure');
      assert.equal(await codeCount(app), 0);
    });

    test("POST /api/password: wrong codes, someone else's code, expired code, formats, already-auth", async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const alice = await buildUser(app);
      const bob = await buildUser(app);
      const client = await anonymous(app);
      await requestCode(client, { username: alice.username });
      const code = linkParameter(mailbox.last(alice.email!), 'code');
      const reset = (body: Record<string, unknown>) => client.call('POST', '/api/password', body);
      const good = { username: alice.username, code, password: 'new-secret' };
      assert.equal((await reset({ ...good, code: 'WrongCode123' })).status, 'wrong-username');
      assert.equal((await reset({ ...good, username: bob.username })).status, 'wrong-username');
      assert.equal((await reset({ ...good, username: 'nobody' })).status, 'wrong-username');
      assert.equal((await reset({ code, password: 'new-secret' })).status, 'missing-element');
      assert.equal(
        (await reset({ username: alice.username, password: 'new-secret' })).status,
        'missing-element',
      );
      assert.equal((await reset({ username: alice.username, code })).status, 'missing-element');
      assert.equal((await reset({ ...good, code: 'bad-code' })).status, 'wrong-syntax');
      assert.equal((await reset({ ...good, password: 'abc' })).status, 'wrong-syntax');
      assert.equal((await reset({ ...good, email: 'bad' })).status, 'wrong-syntax');
      // Nothing changed: the old password still works, the code is still there.
      await new Client(app).login(alice.username, alice.password);
      assert.equal(await codeCount(app), 1);

      const authenticated = new Client(app);
      await authenticated.login(bob.username, bob.password);
      assert.equal((await authenticated.call('POST', '/api/password', good)).status, 'already-auth');

      await app.database.db.updateTable('account_code').set({ expires: 1 }).execute();
      assert.equal((await reset(good)).status, 'wrong-username');
    });

    test('a newer code replaces an older one', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const user = await buildUser(app);
      const client = await anonymous(app);
      await requestCode(client, { username: user.username });
      const first = linkParameter(mailbox.last(user.email!), 'code');
      await requestCode(client, { username: user.username });
      const second = linkParameter(mailbox.last(user.email!), 'code');
      assert.notEqual(first, second);
      assert.equal(
        (
          await client.call('POST', '/api/password', {
            username: user.username,
            code: first,
            password: 'pw-one',
          })
        ).status,
        'wrong-username',
      );
      assert.equal(
        (
          await client.call('POST', '/api/password', {
            username: user.username,
            code: second,
            password: 'pw-two',
          })
        ).status,
        'ok',
      );
    });

    test('wrong codes are throttled per account, across sessions', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const user = await buildUser(app);
      const client = await anonymous(app);
      await requestCode(client, { username: user.username });
      const code = linkParameter(mailbox.last(user.email!), 'code');
      for (let i = 0; i < 10; i++) {
        // A new session for each guess: the account still counts them.
        const guesser = await anonymous(app);
        assert.equal(
          (
            await guesser.call('POST', '/api/password', {
              username: user.username,
              code: `Guess${i}`,
              password: 'x-pw-x',
            })
          ).status,
          'wrong-username',
        );
      }
      assert.equal(
        (await client.call('POST', '/api/password', { username: user.username, code, password: 'new-pw' }))
          .status,
        'resource-throttle',
      );
    });

    test("a partner's user gets `partner`; a code issued for the partner API works the same", async (t) => {
      const { app } = await setup(t, dialect);
      const partner = await buildPartner(app, `acme${process.pid}`);
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      const code = await app.services.recovery.issueRecoveryCode(user.uuid);
      const client = await anonymous(app);
      assert.deepEqual(
        await client.call('POST', '/api/password', { username: user.username, code, password: 'partner-pw' }),
        { status: 'ok', partner: partner.name },
      );
    });
  });
}
