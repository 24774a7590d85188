import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import sharp from 'sharp';
import { build, buildPartner, buildUser, Client, DIALECTS, type Dialect } from '../../../test/helper.js';
import { linkParameter, type Mailbox, startMailbox } from '../../../test/mailbox.js';
import type { App } from '../../app.js';
import { systemClock } from '../../platform/clock.js';
import { CaptchaService } from './captcha.service.js';

const TEST_ANSWER = 'TestAnswer42';
let counter = 0;

async function setup(t: import('node:test').TestContext, dialect: Dialect, env: Record<string, string> = {}) {
  const mailbox = await startMailbox(t);
  const app = await build(t, {
    dialect,
    env: { SMTP_URL: mailbox.url, CAPTCHA_TEST_ANSWER: TEST_ANSWER, ...env },
  });
  return { app, mailbox };
}

function unique(prefix: string): string {
  counter += 1;
  return `${prefix}${process.pid}x${counter}`;
}

async function fetchCaptcha(app: App, sid: string | undefined) {
  return app.server.inject({
    method: 'GET',
    url: '/api/signup/captcha/anything.png',
    headers: sid ? { authorization: `Bearer ${sid}` } : {},
  });
}

/** A session that was served a captcha (answered with CAPTCHA_TEST_ANSWER). */
async function withCaptcha(client: Client): Promise<void> {
  const answer = await fetchCaptcha(client.app, client.sid);
  assert.equal(answer.statusCode, 200);
}

/** Signs up by captcha and e-mail; returns the client (authenticated) and the key's mail. */
async function signUp(app: App, mailbox: Mailbox, fields: Record<string, unknown> = {}) {
  const client = new Client(app);
  await client.open('en');
  const email = `${unique('mail')}@example.com`;
  await withCaptcha(client);
  const requested = await client.call('POST', '/api/signup/verification', { captcha: TEST_ANSWER, email });
  assert.deepEqual(requested, { status: 'ok' });
  const verification = linkParameter(mailbox.last(email), 'verification');
  const username = unique('u');
  const created = await client.call('POST', '/api/signup/user', {
    username,
    firstname: 'Grace',
    lastname: 'Hopper',
    password: 'first-pw',
    verification,
    ...fields,
  });
  assert.equal(created.status, 'ok', created.message);
  return { client, email, username, verification };
}

async function countRows(app: App, table: 'signup_verification' | 'signup_captcha'): Promise<number> {
  const rows = await app.database.db.selectFrom(table).select('expires').execute();
  return rows.length;
}

describe('captcha image', () => {
  test('is a PNG of distorted text, new on every call, 404 without a session', async (t) => {
    const { app } = await setup(t, 'sqlite');
    const client = new Client(app);
    await client.open();
    const first = await fetchCaptcha(app, client.sid);
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['content-type'], 'image/png');
    assert.equal(first.headers['cache-control'], 'no-store');
    const meta = await sharp(first.rawPayload).metadata();
    assert.equal(meta.format, 'png');
    assert.equal(meta.width, 240);
    assert.equal(meta.height, 80);
    // Not a flat picture: many colours (text, curves, noise).
    const stats = await sharp(first.rawPayload).stats();
    assert.ok(stats.channels.slice(0, 3).every((channel) => channel.stdev > 10));
    const second = await fetchCaptcha(app, client.sid);
    assert.notDeepEqual(second.rawPayload, first.rawPayload);

    const none = await fetchCaptcha(app, undefined);
    assert.equal(none.statusCode, 404);
    assert.equal(none.body, '');
    const unknown = await fetchCaptcha(app, 'no-such-session');
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.body, '');
  });

  test('the answer is checked against the text drawn, in either case, once', async (t) => {
    const { app } = await setup(t, 'sqlite');
    const client = new Client(app);
    await client.open();
    const session = app.services.sessions.findBySid(client.sid!)!;
    // The image text is random; render one whose text the test knows to check the comparison.
    const captchas = new CaptchaService(
      app.services.writer,
      { captchaTestAnswer: undefined },
      app.services.throttle,
      systemClock,
      async () => ({
        answer: 'KX4P9A',
        png: Buffer.alloc(0),
      }),
    );
    await captchas.issue(session);
    await captchas.verify(session, await captchas.take(session), 'kx4p9a');
    await assert.rejects(captchas.verify(session, await captchas.take(session), 'kx4p9a'), {
      status: 'wrong-captcha',
    });
    await captchas.issue(session);
    await assert.rejects(captchas.verify(session, await captchas.take(session), 'KX4P9B'), {
      status: 'wrong-captcha',
    });
    // The test answer is not accepted by a node that has none configured.
    await captchas.issue(session);
    await assert.rejects(captchas.verify(session, await captchas.take(session), TEST_ANSWER), {
      status: 'wrong-captcha',
    });
  });
});

for (const dialect of DIALECTS) {
  describe(`sign-up (${dialect})`, () => {
    test('by captcha: the key is mailed, then creates the user and authenticates the session', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const client = new Client(app);
      await client.open('en');
      const email = `${unique('Mixed')}@Example.com`;
      await withCaptcha(client);
      const info = { source: 'web', list: [1, 2, 3] };
      assert.deepEqual(
        await client.call('POST', '/api/signup/verification', { captcha: TEST_ANSWER, email, info }),
        {
          status: 'ok',
        },
      );

      const mail = mailbox.last(email);
      assert.equal(mail.subject, 'Your sign-up: verification key');
      const key = linkParameter(mail, 'verification');
      assert.match(key, /^[A-Za-z0-9]{32}$/);
      assert.ok(mail.text.includes(`Verification key: ${key}`));
      assert.ok(mail.html.includes(`verification=${key}`));
      assert.ok(
        mail.html.includes(`<strong style="font-family: monospace; font-size: 1.2em">${key}</strong>`),
      );
      assert.equal(mail.parsed.headers.get('content-language'), 'en');

      assert.deepEqual(await client.call('GET', `/api/signup/verification/${key}`), {
        status: 'ok',
        email,
        info,
      });

      const username = unique('Grace');
      const created = await client.call('POST', '/api/signup/user', {
        username,
        firstname: 'Grace',
        lastname: 'Hopper',
        password: 'first-pw',
        verification: key,
      });
      assert.deepEqual(created, { status: 'ok' });
      assert.equal((await client.call('GET', '/api/session')).auth, true);

      const { user } = (await client.call('GET', '/api/user')) as unknown as {
        user: Record<string, unknown>;
      };
      assert.equal(user.username, username);
      assert.equal(user.email, email);
      assert.equal(user.display_name, 'Grace Hopper');
      assert.equal(user.country_code, '+49');
      assert.equal(user.language, 'en');
      assert.equal(user.newsletter, true);
      assert.equal(user.validation, 'incomplete');
      assert.equal(user.picture, false);
      assert.equal(user.partner, undefined);
      for (const tag of ['tag_all', 'tag_unread', 'tag_inbox', 'tag_outbox', 'tag_trash', 'tag_shared']) {
        assert.match(String(user[tag]), /^[0-9a-f-]{36}$/, tag);
      }
      for (const tag of ['share_read', 'share_write', 'share_propagate', 'contact']) {
        assert.match(String(user[tag]), /^[0-9a-f-]{36}$/, tag);
      }
      assert.deepEqual((user.feature as { pack: string[] }).pack, ['default']);

      // The key is gone: neither readable nor usable again.
      assert.equal(
        (await client.call('GET', `/api/signup/verification/${key}`)).status,
        'unknown-verification',
      );
      const other = new Client(app);
      await other.open();
      assert.equal(
        (
          await other.call('POST', '/api/signup/user', {
            username: unique('again'),
            firstname: 'A',
            lastname: 'B',
            password: 'secret-pw',
            verification: key,
          })
        ).status,
        'unknown-verification',
      );
      // The new user can log in.
      const login = new Client(app);
      await login.login(username, 'first-pw');
    });

    test('every field of POST /api/signup/user is stored', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const { client } = await signUp(app, mailbox, {
        display_name: 'Amazing Grace',
        country_code: '+1',
        language: 'de',
        newsletter: false,
        email: 'ignored@example.com',
      });
      const { user } = (await client.call('GET', '/api/user')) as unknown as {
        user: Record<string, unknown>;
      };
      assert.equal(user.display_name, 'Amazing Grace');
      assert.equal(user.country_code, '+1');
      assert.equal(user.language, 'de');
      assert.equal(user.newsletter, false);
      // A verified address is not replaced by one in the body.
      assert.notEqual(user.email, 'ignored@example.com');
    });

    test('mails go out in the session language (German by default)', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const client = new Client(app);
      await client.open();
      const email = `${unique('de')}@example.com`;
      await withCaptcha(client);
      await client.call('POST', '/api/signup/verification', { captcha: TEST_ANSWER, email });
      const mail = mailbox.last(email);
      assert.equal(mail.subject, 'Ihre Anmeldung: Bestätigungsschlüssel');
      assert.ok(mail.text.includes('Bestätigungsschlüssel: '));
      assert.ok(mail.html.includes('lang="de"'));
      assert.equal(mail.parsed.headers.get('content-language'), 'de');
    });

    test('the captcha is reset by every call, success or not', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const client = new Client(app);
      await client.open();
      const email = `${unique('r')}@example.com`;
      const verify = (body: Record<string, unknown>) => client.call('POST', '/api/signup/verification', body);

      // None requested.
      assert.equal((await verify({ captcha: TEST_ANSWER, email })).status, 'wrong-captcha');
      // Wrong answer, then the right one: the captcha is gone.
      await withCaptcha(client);
      assert.equal((await verify({ captcha: 'wrong', email })).status, 'wrong-captcha');
      assert.equal((await verify({ captcha: TEST_ANSWER, email })).status, 'wrong-captcha');
      // A call that fails validation resets it too.
      await withCaptcha(client);
      assert.equal((await verify({ captcha: 'not valid!', email })).status, 'wrong-syntax');
      assert.equal((await verify({ captcha: TEST_ANSWER, email })).status, 'wrong-captcha');
      await withCaptcha(client);
      assert.equal((await verify({ captcha: TEST_ANSWER })).status, 'missing-element');
      assert.equal((await verify({ captcha: TEST_ANSWER, email })).status, 'wrong-captcha');
      // Success uses it up.
      await withCaptcha(client);
      assert.equal((await verify({ captcha: TEST_ANSWER, email })).status, 'ok');
      assert.equal((await verify({ captcha: TEST_ANSWER, email })).status, 'wrong-captcha');
      assert.equal(mailbox.to(email).length, 1);
      assert.equal(await countRows(app, 'signup_captcha'), 0);
      // A captcha belongs to the session that was served it.
      await withCaptcha(client);
      const other = new Client(app);
      await other.open();
      assert.equal(
        (await other.call('POST', '/api/signup/verification', { captcha: TEST_ANSWER, email })).status,
        'wrong-captcha',
      );
    });

    test('bad input: missing-element, wrong-syntax, already-exist, and nothing is stored or sent', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const existing = await buildUser(app);
      const client = new Client(app);
      await client.open();
      const cases: [Record<string, unknown>, string][] = [
        [{ email: 'a@example.com' }, 'missing-element'],
        [{ captcha: TEST_ANSWER }, 'missing-element'],
        [{ captcha: TEST_ANSWER, email: 'not-an-address' }, 'wrong-syntax'],
        [{ captcha: TEST_ANSWER, email: 42 }, 'wrong-syntax'],
        [{ captcha: 'x'.repeat(21), email: 'a@example.com' }, 'wrong-syntax'],
        [{ captcha: '', email: 'a@example.com' }, 'wrong-syntax'],
        [{ captcha: TEST_ANSWER, email: 'a@example.com', info: 'x'.repeat(10_001) }, 'wrong-syntax'],
        [{ email: 'a@example.com', 'hardware-code': 'short' }, 'wrong-syntax'],
        [{ email: 'a@example.com', 'hardware-code': 'x'.repeat(51) }, 'wrong-syntax'],
        [{ captcha: TEST_ANSWER, email: existing.email!.toUpperCase() }, 'already-exist'],
      ];
      for (const [body, status] of cases) {
        await withCaptcha(client);
        const answer = await client.call('POST', '/api/signup/verification', body);
        assert.equal(answer.status, status, JSON.stringify(body));
      }
      assert.equal(mailbox.mails.length, 0);
      assert.equal(await countRows(app, 'signup_verification'), 0);
      // info of exactly 10000 characters serialized is fine.
      await withCaptcha(client);
      const info = 'x'.repeat(9_998);
      assert.equal(
        (
          await client.call('POST', '/api/signup/verification', {
            captcha: TEST_ANSWER,
            email: 'b@example.com',
            info,
          })
        ).status,
        'ok',
      );
    });

    test('a mail that cannot be sent is email-failure and leaves no key', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const client = new Client(app);
      await client.open();
      mailbox.refuse.add('refused@example.com');
      await withCaptcha(client);
      const answer = await client.call('POST', '/api/signup/verification', {
        captcha: TEST_ANSWER,
        email: 'refused@example.com',
      });
      assert.equal(answer.status, 'email-failure');
      assert.equal(await countRows(app, 'signup_verification'), 0);
    });

    test('an unreachable SMTP server is email-failure', async (t) => {
      const { app } = await setup(t, dialect, { SMTP_URL: 'smtp://127.0.0.1:1' });
      const client = new Client(app);
      await client.open();
      await withCaptcha(client);
      const answer = await client.call('POST', '/api/signup/verification', {
        captcha: TEST_ANSWER,
        email: 'someone@example.com',
      });
      assert.equal(answer.status, 'email-failure');
      assert.equal(await countRows(app, 'signup_verification'), 0);
    });

    test('partner-controlled: key, uuid and info to the partner; the user carries the partner', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const partner = await buildPartner(app, unique('acme'));
      const partnerClient = new Client(app);
      await partnerClient.open();
      assert.equal(
        (await partnerClient.call('POST', '/api/session', { partner: partner.name, key: partner.key }))
          .status,
        'ok',
      );
      const info = ['customer', 4711];
      const answer = await partnerClient.call('POST', '/api/signup/verification', { info });
      assert.equal(answer.status, 'ok');
      assert.match(String(answer.verification), /^[A-Za-z0-9]{32}$/);
      assert.match(String(answer.uuid), /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-/);
      assert.deepEqual(answer.info, info);
      assert.equal(mailbox.mails.length, 0);

      const user = new Client(app);
      await user.open();
      assert.deepEqual(await user.call('GET', `/api/signup/verification/${answer.verification}`), {
        status: 'ok',
        partner: partner.name,
        uuid: answer.uuid,
        info,
      });
      const fields = {
        username: unique('p'),
        firstname: 'Pat',
        lastname: 'Partner',
        password: 'partner-pw',
        verification: answer.verification,
      };
      // The verification has no e-mail address, so the body must bring one.
      assert.equal((await user.call('POST', '/api/signup/user', fields)).status, 'missing-element');
      const existing = await buildUser(app);
      assert.equal(
        (await user.call('POST', '/api/signup/user', { ...fields, email: existing.email })).status,
        'already-exist',
      );
      assert.equal(
        (await user.call('POST', '/api/signup/user', { ...fields, email: 'pat@example.com' })).status,
        'ok',
      );
      const session = await user.call('GET', '/api/session');
      assert.equal(session.partner, partner.name);
      const { user: object } = (await user.call('GET', '/api/user')) as unknown as {
        user: Record<string, unknown>;
      };
      assert.equal(object.uuid, answer.uuid);
      assert.equal(object.partner, partner.name);
      assert.equal(object.email, 'pat@example.com');
    });

    test('partner-controlled with an e-mail address: already-exist, and the address is used', async (t) => {
      const { app } = await setup(t, dialect);
      const partner = await buildPartner(app, unique('acme'));
      const existing = await buildUser(app);
      const partnerClient = new Client(app);
      await partnerClient.open();
      await partnerClient.call('POST', '/api/session', { partner: partner.name, key: partner.key });
      assert.equal(
        (await partnerClient.call('POST', '/api/signup/verification', { email: existing.email })).status,
        'already-exist',
      );
      const answer = await partnerClient.call('POST', '/api/signup/verification', {
        email: 'kim@example.com',
      });
      assert.equal(answer.info, undefined);
      const user = new Client(app);
      await user.open();
      const described = await user.call('GET', `/api/signup/verification/${answer.verification}`);
      assert.equal(described.email, 'kim@example.com');
      assert.equal(
        (
          await user.call('POST', '/api/signup/user', {
            username: unique('k'),
            firstname: 'Kim',
            lastname: 'K',
            password: 'secret-pw',
            verification: answer.verification,
          })
        ).status,
        'ok',
      );
      const { user: object } = (await user.call('GET', '/api/user')) as unknown as {
        user: Record<string, unknown>;
      };
      assert.equal(object.email, 'kim@example.com');
    });

    test('hardware code: key returned, at most 5 verifications, wrong-code, exceeded-limit', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      await app.services.hardwareCodes.registerCode('HW-2024-ABCDEF', 'test box');
      const client = new Client(app);
      await client.open();
      const keys: string[] = [];
      for (let i = 0; i < 5; i++) {
        const answer = await client.call('POST', '/api/signup/verification', {
          email: `hw${i}@example.com`,
          'hardware-code': 'HW-2024-ABCDEF',
          info: { box: i },
        });
        assert.equal(answer.status, 'ok');
        assert.match(String(answer.verification), /^[A-Za-z0-9]{32}$/);
        assert.equal(answer.uuid, undefined);
        keys.push(String(answer.verification));
      }
      assert.equal(
        (
          await client.call('POST', '/api/signup/verification', {
            email: 'hw5@example.com',
            'hardware-code': 'HW-2024-ABCDEF',
          })
        ).status,
        'exceeded-limit',
      );
      assert.equal(
        (
          await client.call('POST', '/api/signup/verification', {
            email: 'hw6@example.com',
            'hardware-code': 'HW-2024-XXXXXX',
          })
        ).status,
        'wrong-code',
      );
      // The e-mail address is still needed, and must be free.
      assert.equal(
        (await client.call('POST', '/api/signup/verification', { 'hardware-code': 'HW-2024-ABCDEF' })).status,
        'missing-element',
      );
      assert.equal(mailbox.mails.length, 0);
      assert.deepEqual(await client.call('GET', `/api/signup/verification/${keys[2]}`), {
        status: 'ok',
        email: 'hw2@example.com',
        info: { box: 2 },
      });
      assert.equal(
        (
          await client.call('POST', '/api/signup/user', {
            username: unique('hw'),
            firstname: 'Box',
            lastname: 'Owner',
            password: 'secret-pw',
            verification: keys[2],
          })
        ).status,
        'ok',
      );
      const { user } = (await client.call('GET', '/api/user')) as unknown as {
        user: Record<string, unknown>;
      };
      assert.equal(user.email, 'hw2@example.com');
    });

    test('a failed hardware verification does not use up the code', async (t) => {
      const { app } = await setup(t, dialect);
      const existing = await buildUser(app);
      await app.services.hardwareCodes.registerCode('HW-2024-KEEPME', 'test box');
      const client = new Client(app);
      await client.open();
      for (let i = 0; i < 3; i++) {
        assert.equal(
          (
            await client.call('POST', '/api/signup/verification', {
              email: existing.email,
              'hardware-code': 'HW-2024-KEEPME',
            })
          ).status,
          'already-exist',
        );
      }
      const [code] = await app.services.hardwareCodes.listCodes();
      assert.equal(code?.uses, 0);
    });

    test('DELETE /api/signup/verification deletes the key; unknown keys are unknown-verification', async (t) => {
      const { app } = await setup(t, dialect);
      const partner = await buildPartner(app, unique('acme'));
      const client = new Client(app);
      await client.open();
      await client.call('POST', '/api/session', { partner: partner.name, key: partner.key });
      const { verification } = await client.call('POST', '/api/signup/verification', {});
      const anonymous = new Client(app);
      await anonymous.open();
      assert.deepEqual(await anonymous.call('DELETE', `/api/signup/verification/${verification}`), {
        status: 'ok',
      });
      assert.equal(
        (await anonymous.call('GET', `/api/signup/verification/${verification}`)).status,
        'unknown-verification',
      );
      assert.equal(
        (await anonymous.call('DELETE', `/api/signup/verification/${verification}`)).status,
        'unknown-verification',
      );
      assert.equal((await anonymous.call('GET', '/api/signup/verification/bad-key!')).status, 'wrong-syntax');
      assert.equal(
        (await anonymous.call('GET', `/api/signup/verification/${'a'.repeat(51)}`)).status,
        'wrong-syntax',
      );
    });

    test('an expired key is unknown-verification', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const client = new Client(app);
      await client.open();
      await withCaptcha(client);
      await client.call('POST', '/api/signup/verification', {
        captcha: TEST_ANSWER,
        email: 'late@example.com',
      });
      const key = linkParameter(mailbox.last('late@example.com'), 'verification');
      await app.database.db.updateTable('signup_verification').set({ expires: 1 }).execute();
      assert.equal(
        (await client.call('GET', `/api/signup/verification/${key}`)).status,
        'unknown-verification',
      );
      assert.equal(
        (
          await client.call('POST', '/api/signup/user', {
            username: unique('late'),
            firstname: 'L',
            lastname: 'L',
            password: 'secret-pw',
            verification: key,
          })
        ).status,
        'unknown-verification',
      );
    });

    test('POST /api/signup/user: every field format, duplicate-username, already-auth; failures keep the key', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const existing = await buildUser(app);
      const client = new Client(app);
      await client.open();
      await withCaptcha(client);
      await client.call('POST', '/api/signup/verification', {
        captcha: TEST_ANSWER,
        email: 'fields@example.com',
      });
      const verification = linkParameter(mailbox.last('fields@example.com'), 'verification');
      const good = {
        username: unique('f'),
        firstname: 'F',
        lastname: 'L',
        password: 'secret-pw',
        verification,
      };
      const cases: [Record<string, unknown>, string][] = [
        [{ username: undefined }, 'missing-element'],
        [{ firstname: undefined }, 'missing-element'],
        [{ lastname: undefined }, 'missing-element'],
        [{ password: undefined }, 'missing-element'],
        [{ verification: undefined }, 'missing-element'],
        [{ username: 'a' }, 'wrong-syntax'],
        [{ username: 'a'.repeat(21) }, 'wrong-syntax'],
        [{ username: 'with space' }, 'wrong-syntax'],
        [{ firstname: '' }, 'wrong-syntax'],
        [{ firstname: 'x'.repeat(51) }, 'wrong-syntax'],
        [{ lastname: 'x'.repeat(51) }, 'wrong-syntax'],
        [{ display_name: '' }, 'wrong-syntax'],
        [{ display_name: 'x'.repeat(101) }, 'wrong-syntax'],
        [{ country_code: '49' }, 'wrong-syntax'],
        [{ country_code: '+1234' }, 'wrong-syntax'],
        [{ password: 'four' }, 'wrong-syntax'],
        [{ password: 'x'.repeat(51) }, 'wrong-syntax'],
        [{ language: 'fr' }, 'wrong-syntax'],
        [{ newsletter: 'yes' }, 'wrong-syntax'],
        [{ email: 'nope' }, 'wrong-syntax'],
        [{ verification: 'has-dash' }, 'wrong-syntax'],
        [{ verification: 'Unknown0Key' }, 'unknown-verification'],
        [{ username: existing.username.toUpperCase() }, 'duplicate-username'],
      ];
      for (const [change, status] of cases) {
        const body: Record<string, unknown> = { ...good, ...change };
        for (const key of Object.keys(change)) if (change[key] === undefined) delete body[key];
        assert.equal(
          (await client.call('POST', '/api/signup/user', body)).status,
          status,
          JSON.stringify(change),
        );
      }
      assert.equal((await client.call('GET', '/api/session')).auth, false);
      // The key survived every failure.
      assert.equal((await client.call('POST', '/api/signup/user', good)).status, 'ok');
      // An authenticated session cannot sign up again.
      assert.equal((await client.call('POST', '/api/signup/user', good)).status, 'already-auth');
    });

    test('guessing keys is throttled per session', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const client = new Client(app);
      await client.open();
      await withCaptcha(client);
      await client.call('POST', '/api/signup/verification', {
        captcha: TEST_ANSWER,
        email: 'guess@example.com',
      });
      const key = linkParameter(mailbox.last('guess@example.com'), 'verification');
      for (let i = 0; i < 10; i++) {
        assert.equal(
          (await client.call('GET', `/api/signup/verification/Guess${i}`)).status,
          'unknown-verification',
        );
      }
      assert.equal((await client.call('GET', `/api/signup/verification/${key}`)).status, 'resource-throttle');
      const fresh = new Client(app);
      await fresh.open();
      assert.equal((await fresh.call('GET', `/api/signup/verification/${key}`)).status, 'ok');
    });

    test('wrong captchas are throttled per session; the image is then refused', async (t) => {
      const { app } = await setup(t, dialect);
      const client = new Client(app);
      await client.open();
      for (let i = 0; i < 10; i++) {
        await withCaptcha(client);
        assert.equal(
          (
            await client.call('POST', '/api/signup/verification', {
              captcha: 'wrong',
              email: 'x@example.com',
            })
          ).status,
          'wrong-captcha',
        );
      }
      const refused = await fetchCaptcha(app, client.sid);
      assert.equal(refused.statusCode, 404);
      assert.equal(
        (
          await client.call('POST', '/api/signup/verification', {
            captcha: TEST_ANSWER,
            email: 'x@example.com',
          })
        ).status,
        'resource-throttle',
      );
    });
  });
}

test('without SMTP_URL mails are written as .eml files to DATA_DIR/outbox', async (t) => {
  const app = await build(t, { env: { CAPTCHA_TEST_ANSWER: TEST_ANSWER } });
  const client = new Client(app);
  await client.open('en');
  await withCaptcha(client);
  assert.equal(
    (
      await client.call('POST', '/api/signup/verification', {
        captcha: TEST_ANSWER,
        email: 'box@example.com',
      })
    ).status,
    'ok',
  );
  const outbox = path.join(app.config.dataDir, 'outbox');
  const files = fs.readdirSync(outbox).filter((name) => name.endsWith('.eml'));
  assert.equal(files.length, 1);
  const mail = await simpleParser(fs.readFileSync(path.join(outbox, files[0]!)));
  assert.equal(mail.subject, 'Your sign-up: verification key');
  assert.deepEqual(
    (Array.isArray(mail.to) ? mail.to : [mail.to]).flatMap((to) => to?.value.map((v) => v.address)),
    ['box@example.com'],
  );
  const key = /verification=([A-Za-z0-9]+)/.exec(mail.text ?? '')?.[1];
  assert.ok(key);
  assert.ok(String(mail.html).includes(key));
  assert.equal((await client.call('GET', `/api/signup/verification/${key}`)).email, 'box@example.com');
});
