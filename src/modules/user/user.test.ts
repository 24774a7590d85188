import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import sharp from 'sharp';
import {
  build,
  buildPartner,
  buildUser,
  Client,
  DIALECTS,
  type Dialect,
  loggedInClient,
  upload,
} from '../../../test/helper.js';
import { linkParameter, startMailbox } from '../../../test/mailbox.js';
import { newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';

async function setup(t: TestContext, dialect: Dialect, env: Record<string, string> = {}) {
  const mailbox = await startMailbox(t);
  const app = await build(t, { dialect, env: { SMTP_URL: mailbox.url, ...env } });
  return { app, mailbox };
}

type UserAnswer = Record<string, unknown> & { feature: Record<string, unknown> };

async function getUser(client: Client): Promise<UserAnswer> {
  const answer = await client.call('GET', '/api/user');
  assert.equal(answer.status, 'ok');
  return answer.user as UserAnswer;
}

const seen = new WeakMap<Client, number>();

/** Names of the events the session got since the last look (event ids start at 0). */
async function events(client: Client): Promise<string[]> {
  const next = seen.get(client) ?? 0;
  const answer = await client.call('GET', `/api/event?timeout=0&next=${next}`);
  const list = answer.event as { id: number; event: string }[];
  if (list.length > 0) seen.set(client, list[list.length - 1]!.id + 1);
  return list.map((e) => e.event);
}

const ADDRESS = {
  birthday: '1906-12-09',
  zip_code: '10115',
  town: 'Berlin',
  street: 'Invalidenstraße',
  house_number: '117',
  country: 'de',
};

async function download(app: App, client: Client | undefined, url: string) {
  return app.server.inject({
    method: 'GET',
    url,
    headers: client ? { authorization: `Bearer ${client.sid}` } : {},
  });
}

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

for (const dialect of DIALECTS) {
  describe(`user (${dialect})`, () => {
    test('GET /api/user has every field of the User table; unset fields are absent', async (t) => {
      const { app } = await setup(t, dialect);
      const { client, user } = await loggedInClient(app);
      const object = await getUser(client);
      assert.equal(object.uuid, user.uuid);
      assert.equal(object.username, user.username);
      assert.equal(object.firstname, 'Ada');
      assert.equal(object.lastname, 'Lovelace');
      assert.equal(object.display_name, 'Ada Lovelace');
      assert.equal(object.email, user.email);
      assert.equal(object.language, 'de');
      assert.equal(object.newsletter, true);
      assert.equal(object.country_code, '+49');
      assert.equal(object.validation, 'incomplete');
      assert.equal(object.picture, false);
      for (const absent of [
        'birthday',
        'partner',
        'zip_code',
        'town',
        'street',
        'house_number',
        'country',
        'area_code',
        'fax_ident',
        'fax_header',
        'usergroup',
      ]) {
        assert.equal(object[absent], undefined, absent);
      }
      for (const tag of [
        'tag_all',
        'tag_unread',
        'tag_inbox',
        'tag_outbox',
        'tag_trash',
        'tag_shared',
        'share_read',
        'share_write',
        'share_propagate',
        'contact',
      ]) {
        assert.match(String(object[tag]), /^[0-9a-f]{8}-[0-9a-f]{4}-1/, tag);
      }
      assert.deepEqual(object.feature, {
        pack: ['default'],
        quota: { sip: 5, volume: 100, fax: 50, calls: 2 },
        // The user's own objects (their contact) take a little storage already.
        used: {
          volume: Math.ceil((await app.services.store.usedVolume(user.uuid)) / 10485.76) / 100,
          fax: 0,
          sip: 0,
        },
        feature: {
          fax_noad: false,
          call_unrestricted: false,
          box_enable: false,
          dialplan_enable: true,
          control_phone: false,
        },
      });
    });

    test('feature sums the quotas and flags of every pack the user holds', async (t) => {
      const { app } = await setup(t, dialect);
      const { client, user } = await loggedInClient(app);
      await app.services.features.createPack('pro', {
        quota: { volume: 900, fax: 50 },
        feature: { fax_noad: true },
      });
      await app.services.features.assignPack(user.uuid, 'pro');
      const { feature } = await getUser(client);
      assert.deepEqual(feature.pack, ['default', 'pro']);
      assert.deepEqual(feature.quota, { sip: 5, volume: 1000, fax: 100, calls: 2 });
      assert.equal((feature.feature as Record<string, boolean>).fax_noad, true);
    });

    test('POST /api/user changes every simple field and emits user_modify to all sessions', async (t) => {
      const { app } = await setup(t, dialect);
      const { client, user } = await loggedInClient(app);
      const other = new Client(app);
      await other.login(user.username, user.password);
      const stranger = (await loggedInClient(app)).client;
      await events(other);
      await events(stranger);

      const answer = await client.call('POST', '/api/user', {
        firstname: 'Augusta',
        lastname: 'King',
        display_name: 'Countess of Lovelace',
        country_code: '+44',
        language: 'en',
        newsletter: false,
        area_code: '20',
        fax_ident: '+44 20 1234',
        fax_header: 'Analytical Engine Ltd.',
        ...ADDRESS,
      });
      assert.deepEqual(answer, { status: 'ok' });
      const object = await getUser(client);
      assert.equal(object.firstname, 'Augusta');
      assert.equal(object.lastname, 'King');
      assert.equal(object.display_name, 'Countess of Lovelace');
      assert.equal(object.country_code, '+44');
      assert.equal(object.language, 'en');
      assert.equal(object.newsletter, false);
      assert.equal(object.area_code, '20');
      assert.equal(object.fax_ident, '+44 20 1234');
      assert.equal(object.fax_header, 'Analytical Engine Ltd.');
      for (const [field, value] of Object.entries(ADDRESS)) assert.equal(object[field], value, field);
      assert.equal(object.validation, 'incomplete');

      assert.deepEqual(await events(other), ['user_modify']);
      assert.deepEqual(await events(client), ['user_modify']);
      assert.deepEqual(await events(stranger), []);

      // Nothing to change: no event.
      assert.equal((await client.call('POST', '/api/user', { firstname: 'Augusta' })).status, 'ok');
      assert.equal((await client.call('POST', '/api/user', {})).status, 'ok');
      assert.deepEqual(await events(other), []);

      // An empty string removes area_code, fax_ident and fax_header.
      await client.call('POST', '/api/user', { area_code: '', fax_ident: '', fax_header: '' });
      const cleared = await getUser(client);
      assert.equal(cleared.area_code, undefined);
      assert.equal(cleared.fax_ident, undefined);
      assert.equal(cleared.fax_header, undefined);
    });

    test('POST /api/user: every field format and the address rule; bad input changes nothing', async (t) => {
      const { app } = await setup(t, dialect);
      const { client } = await loggedInClient(app);
      const before = await getUser(client);
      const cases: [Record<string, unknown>, string][] = [
        [{ firstname: '' }, 'wrong-syntax'],
        [{ firstname: 'x'.repeat(51) }, 'wrong-syntax'],
        [{ lastname: 'x'.repeat(51) }, 'wrong-syntax'],
        [{ display_name: '' }, 'wrong-syntax'],
        [{ display_name: 'x'.repeat(101) }, 'wrong-syntax'],
        [{ ...ADDRESS, birthday: '09.12.1906' }, 'wrong-syntax'],
        [{ ...ADDRESS, birthday: '1906-13-09' }, 'wrong-syntax'],
        [{ ...ADDRESS, birthday: '1906-02-30' }, 'wrong-syntax'],
        [{ ...ADDRESS, birthday: '2999-01-01' }, 'wrong-syntax'],
        [{ ...ADDRESS, zip_code: '' }, 'wrong-syntax'],
        [{ ...ADDRESS, town: 'x'.repeat(51) }, 'wrong-syntax'],
        [{ ...ADDRESS, street: 'x'.repeat(51) }, 'wrong-syntax'],
        [{ ...ADDRESS, house_number: '' }, 'wrong-syntax'],
        [{ ...ADDRESS, country: 'DE' }, 'wrong-syntax'],
        [{ ...ADDRESS, country: 'deu' }, 'wrong-syntax'],
        [{ area_code: '03x' }, 'wrong-syntax'],
        [{ country_code: '44' }, 'wrong-syntax'],
        [{ country_code: '+4444' }, 'wrong-syntax'],
        [{ password: 'abcd', old_password: 'secret-pw' }, 'wrong-syntax'],
        [{ password: 'new-pw-ok', old_password: 'abc' }, 'wrong-syntax'],
        [{ pin: '123' }, 'wrong-syntax'],
        [{ pin: '12345' }, 'wrong-syntax'],
        [{ pin: 'abcd' }, 'wrong-syntax'],
        [{ language: 'fr' }, 'wrong-syntax'],
        [{ email: 'not-an-address' }, 'wrong-syntax'],
        [{ code: 'bad-code' }, 'wrong-syntax'],
        [{ email: 'new@example.com', code: 'Abc123' }, 'wrong-syntax'],
        [{ newsletter: 'no' }, 'wrong-syntax'],
        [{ fax_ident: '+49-30' }, 'wrong-syntax'],
        [{ fax_ident: '1'.repeat(21) }, 'wrong-syntax'],
        [{ fax_header: 'x'.repeat(41) }, 'wrong-syntax'],
        [{ firstname: 42 }, 'wrong-syntax'],
        [{ password: 'new-pw-ok' }, 'missing-element'],
        // The six address fields require each other.
        ...Object.keys(ADDRESS).map((field): [Record<string, unknown>, string] => {
          const partial: Record<string, unknown> = { ...ADDRESS, firstname: 'Changed' };
          delete partial[field];
          return [partial, 'missing-element'];
        }),
        [{ zip_code: '12345' }, 'missing-element'],
      ];
      for (const [body, status] of cases) {
        const answer = await client.call('POST', '/api/user', { firstname: 'Changed', ...body });
        assert.equal(answer.status, status, JSON.stringify(body));
      }
      assert.deepEqual(await getUser(client), before);
      assert.deepEqual(await events(client), []);
    });

    test('password change needs the old password: missing-element, wrong-password, then the new one works', async (t) => {
      const { app } = await setup(t, dialect);
      const { client, user } = await loggedInClient(app);
      assert.equal(
        (
          await client.call('POST', '/api/user', {
            password: 'new-secret',
            old_password: 'wrong-old',
            firstname: 'X',
          })
        ).status,
        'wrong-password',
      );
      assert.equal((await getUser(client)).firstname, 'Ada');
      assert.equal(
        (await client.call('POST', '/api/user', { password: 'new-secret', old_password: user.password }))
          .status,
        'ok',
      );
      await new Client(app).login(user.username, 'new-secret');
      const old = new Client(app);
      await old.open();
      assert.equal(
        (await old.call('POST', '/api/session', { username: user.username, password: user.password })).status,
        'wrong-credentials',
      );
    });

    test('wrong old passwords are throttled per account', async (t) => {
      const { app } = await setup(t, dialect);
      const { client, user } = await loggedInClient(app);
      for (let i = 0; i < 10; i++) {
        assert.equal(
          (await client.call('POST', '/api/user', { password: 'new-secret', old_password: `wrong-${i}` }))
            .status,
          'wrong-password',
        );
      }
      assert.equal(
        (await client.call('POST', '/api/user', { password: 'new-secret', old_password: user.password }))
          .status,
        'resource-throttle',
      );
    });

    test('the PIN is stored hashed and can be checked', async (t) => {
      const { app } = await setup(t, dialect);
      const { client, user } = await loggedInClient(app);
      assert.equal(await app.services.users.verifyPin(user.uuid, '1234'), false);
      assert.equal((await client.call('POST', '/api/user', { pin: '1234' })).status, 'ok');
      assert.equal(await app.services.users.verifyPin(user.uuid, '1234'), true);
      assert.equal(await app.services.users.verifyPin(user.uuid, '4321'), false);
      const row = await app.services.users.findUser(user.uuid);
      assert.ok(row?.pin_hash?.startsWith('$argon2id$'));
      assert.deepEqual(await events(client), ['user_modify']);
    });

    test('e-mail change in two steps with a mailed code', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const { client, user } = await loggedInClient(app);
      const taken = await buildUser(app);
      await client.call('GET', '/api/session?language=en');

      // An address in use: the same answer, but no mail.
      assert.equal(
        (await client.call('POST', '/api/user', { email: taken.email!.toUpperCase() })).status,
        'ok',
      );
      assert.equal(mailbox.mails.length, 0);
      await events(client);
      mailbox.refuse.add('refused@example.com');
      assert.equal(
        (await client.call('POST', '/api/user', { email: 'refused@example.com' })).status,
        'email-failure',
      );
      assert.equal((await app.database.db.selectFrom('account_code').selectAll().execute()).length, 0);
      // The same address again is nothing to do.
      assert.equal((await client.call('POST', '/api/user', { email: user.email })).status, 'ok');
      assert.equal(mailbox.mails.length, 0);
      await events(client);

      assert.equal((await client.call('POST', '/api/user', { email: 'Ada.New@example.com' })).status, 'ok');
      const mail = mailbox.last('ada.new@example.com');
      assert.equal(mail.subject, 'Confirm your new e-mail address');
      const code = linkParameter(mail, 'code');
      assert.match(code, /^[A-Za-z0-9]{24}$/);
      assert.ok(mail.html.includes(`code=${code}`));
      // Not changed yet.
      assert.equal((await getUser(client)).email, user.email);

      assert.equal((await client.call('POST', '/api/user', { code: 'WrongCode1' })).status, 'wrong-code');
      // Another user cannot use the code.
      const { client: mallory } = await loggedInClient(app);
      assert.equal((await mallory.call('POST', '/api/user', { code })).status, 'wrong-code');

      assert.equal((await client.call('POST', '/api/user', { code })).status, 'ok');
      assert.equal((await getUser(client)).email, 'Ada.New@example.com');
      assert.ok((await events(client)).includes('user_modify'));
      assert.equal((await client.call('POST', '/api/user', { code })).status, 'wrong-code');

      const login = new Client(app);
      await login.open();
      assert.equal(
        (await login.call('POST', '/api/session', { email: 'ada.new@example.com', password: user.password }))
          .status,
        'ok',
      );
    });

    test('an e-mail code expires, and a newer one replaces it', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const { client } = await loggedInClient(app);
      await client.call('POST', '/api/user', { email: 'first@example.com' });
      const first = linkParameter(mailbox.last('first@example.com'), 'code');
      await client.call('POST', '/api/user', { email: 'second@example.com' });
      const second = linkParameter(mailbox.last('second@example.com'), 'code');
      assert.equal((await client.call('POST', '/api/user', { code: first })).status, 'wrong-code');
      await app.database.db.updateTable('account_code').set({ expires: 1 }).execute();
      assert.equal((await client.call('POST', '/api/user', { code: second })).status, 'wrong-code');
    });

    test('a confirmed address taken meanwhile is already-exist', async (t) => {
      const { app, mailbox } = await setup(t, dialect);
      const { client } = await loggedInClient(app);
      await client.call('POST', '/api/user', { email: 'race@example.com' });
      const code = linkParameter(mailbox.last('race@example.com'), 'code');
      await buildUser(app, { email: 'race@example.com' });
      assert.equal((await client.call('POST', '/api/user', { code })).status, 'already-exist');
    });

    test('profile picture: upload any image, stored as PNG of at most 512 pixels, download, delete', async (t) => {
      const { app } = await setup(t, dialect);
      const { client } = await loggedInClient(app);
      assert.equal((await download(app, client, '/api/user/picture/me.png')).statusCode, 404);

      const jpeg = await sharp({ create: { width: 1600, height: 800, channels: 3, background: '#3366cc' } })
        .jpeg()
        .toBuffer();
      assert.deepEqual(await upload(client, '/api/user/picture/holiday.jpg', jpeg, 'image/jpeg'), {
        status: 'ok',
      });
      assert.equal((await getUser(client)).picture, true);
      assert.deepEqual(await events(client), ['user_modify']);

      const got = await download(app, client, '/api/user/picture/me.png?inline');
      assert.equal(got.statusCode, 200);
      assert.equal(got.headers['content-type'], 'image/png');
      assert.match(String(got.headers['content-disposition']), /^inline/);
      const meta = await sharp(got.rawPayload).metadata();
      assert.equal(meta.format, 'png');
      assert.equal(meta.width, 512);
      assert.equal(meta.height, 256);
      assert.match(
        String((await download(app, client, '/api/user/picture/me.png')).headers['content-disposition']),
        /^attachment/,
      );
      // Only the signed-in user's own session can download it.
      assert.equal((await download(app, undefined, '/api/user/picture/me.png')).statusCode, 404);

      assert.equal(
        (await upload(client, '/api/user/picture/x.png', Buffer.from('not an image'), 'image/png')).status,
        'malformed-file',
      );
      assert.equal(
        (await upload(client, '/api/user/picture/x.png', Buffer.alloc(0), 'image/png')).status,
        'malformed-file',
      );
      // The picture stayed.
      assert.equal((await download(app, client, '/api/user/picture/me.png')).statusCode, 200);

      assert.deepEqual(await client.call('DELETE', '/api/user/picture'), { status: 'ok' });
      assert.equal((await getUser(client)).picture, false);
      assert.equal((await download(app, client, '/api/user/picture/me.png')).statusCode, 404);
      assert.deepEqual(await client.call('DELETE', '/api/user/picture'), { status: 'ok' });
    });

    test('uploads over the limit are too-large', async (t) => {
      const { app } = await setup(t, dialect, { MAX_UPLOAD_SIZE: '2048' });
      const { client } = await loggedInClient(app);
      await client.call('POST', '/api/user', ADDRESS);
      const big = Buffer.alloc(4096, 1);
      assert.equal((await upload(client, '/api/user/picture/big.png', big, 'image/png')).status, 'too-large');
      assert.equal(
        (await upload(client, '/api/user/idcard/big.pdf', Buffer.concat([PDF, big]), 'application/pdf'))
          .status,
        'too-large',
      );
      const object = await getUser(client);
      assert.equal(object.picture, false);
      assert.equal(object.validation, 'incomplete');
    });

    test('id card: needs the address, must be a PDF, moves validation to checking and makes a job', async (t) => {
      const { app } = await setup(t, dialect);
      const { client } = await loggedInClient(app);
      assert.equal(
        (await upload(client, '/api/user/idcard/id.pdf', PDF, 'application/pdf')).status,
        'illegal-state',
      );
      await client.call('POST', '/api/user', ADDRESS);
      assert.equal(
        (await upload(client, '/api/user/idcard/id.pdf', Buffer.from('GIF89a'), 'application/pdf')).status,
        'malformed-file',
      );
      assert.equal((await getUser(client)).validation, 'incomplete');
      await events(client);
      assert.deepEqual(await upload(client, '/api/user/idcard/id.pdf', PDF, 'application/pdf'), {
        status: 'ok',
      });
      assert.equal((await getUser(client)).validation, 'checking');
      assert.deepEqual(await events(client), ['user_modify']);

      // The checker, with the internal permission.
      const { client: checker, user: checkerUser } = await loggedInClient(app);
      assert.equal((await checker.call('GET', '/api/idcardcheck')).status, 'access-denied');
      await app.services.users.grantPermission(checkerUser.uuid, 'idcardcheck');
      const { jobs } = (await checker.call('GET', '/api/idcardcheck')) as unknown as { jobs: string[] };
      assert.equal(jobs.length, 1);
      const job = jobs[0]!;
      assert.deepEqual(await checker.call('GET', `/api/idcardcheck/${job}/address`), {
        status: 'ok',
        user: {
          firstname: 'Ada',
          lastname: 'Lovelace',
          zip_code: ADDRESS.zip_code,
          town: ADDRESS.town,
          street: ADDRESS.street,
          house_number: ADDRESS.house_number,
          country: ADDRESS.country,
        },
      });
      // A new upload replaces the open job.
      await upload(client, '/api/user/idcard/id2.pdf', PDF, 'application/pdf');
      const { jobs: after } = (await checker.call('GET', '/api/idcardcheck')) as unknown as {
        jobs: string[];
      };
      assert.equal(after.length, 1);
      assert.notEqual(after[0], job);
      assert.equal((await checker.call('GET', `/api/idcardcheck/${job}/address`)).status, 'wrong-job');
    });

    test('changing the address voids the validation and drops the open job', async (t) => {
      const { app } = await setup(t, dialect);
      const { client } = await loggedInClient(app);
      const { client: checker, user: checkerUser } = await loggedInClient(app);
      await app.services.users.grantPermission(checkerUser.uuid, 'idcardcheck');
      await client.call('POST', '/api/user', ADDRESS);
      await upload(client, '/api/user/idcard/id.pdf', PDF, 'application/pdf');
      // The same address again changes nothing.
      await client.call('POST', '/api/user', ADDRESS);
      assert.equal((await getUser(client)).validation, 'checking');
      await client.call('POST', '/api/user', { ...ADDRESS, street: 'Unter den Linden' });
      assert.equal((await getUser(client)).validation, 'incomplete');
      assert.deepEqual((await checker.call('GET', '/api/idcardcheck')).jobs, []);
    });

    test('account deletion: wrong-password, then the account and its session are gone', async (t) => {
      const { app } = await setup(t, dialect);
      const { client, user } = await loggedInClient(app);
      await client.call('POST', '/api/user', ADDRESS);
      await upload(client, '/api/user/idcard/id.pdf', PDF, 'application/pdf');
      const png = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#fff' } })
        .png()
        .toBuffer();
      await upload(client, '/api/user/picture/p.png', png, 'image/png');
      assert.equal(
        (await client.call('POST', '/api/user/delete', { password: 'not-it' })).status,
        'wrong-password',
      );
      assert.equal((await client.call('POST', '/api/user/delete', {})).status, 'missing-element');
      assert.equal((await client.call('GET', '/api/user')).status, 'ok');
      assert.deepEqual(await client.call('POST', '/api/user/delete', { password: user.password }), {
        status: 'ok',
      });
      assert.equal((await client.call('GET', '/api/user')).status, 'no-session');
      assert.equal(await app.services.users.findUser(user.uuid), undefined);
      const login = new Client(app);
      await login.open();
      assert.equal(
        (await login.call('POST', '/api/session', { username: user.username, password: user.password }))
          .status,
        'wrong-credentials',
      );
      assert.equal((await app.database.db.selectFrom('idcard_job').selectAll().execute()).length, 0);
    });

    test('a partner-controlled account is not deleted by its user', async (t) => {
      const { app } = await setup(t, dialect);
      const partner = await buildPartner(app, `acme${process.pid}`);
      const { client, user } = await loggedInClient(app, { partnerUuid: partner.uuid });
      assert.equal(
        (await client.call('POST', '/api/user/delete', { password: user.password })).status,
        'access-denied',
      );
      assert.ok(await app.services.users.findUser(user.uuid));
      assert.equal((await getUser(client)).partner, partner.name);
    });

    test('the user routes need an authenticated user', async (t) => {
      const { app } = await setup(t, dialect);
      const client = new Client(app);
      await client.open();
      assert.equal((await client.call('GET', '/api/user')).status, 'no-auth');
      assert.equal((await client.call('POST', '/api/user', { firstname: 'X' })).status, 'no-auth');
      assert.equal(
        (await client.call('POST', '/api/user/delete', { password: 'secret-pw' })).status,
        'no-auth',
      );
      assert.equal((await download(app, client, '/api/user/picture/x.png')).statusCode, 404);
      const none = new Client(app);
      assert.equal((await none.call('GET', '/api/user')).status, 'no-session');
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`user metadata (${dialect})`, () => {
    test('user metadata: stored per user, user_metadata to all sessions of the user only', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const second = new Client(app);
      await second.login(user.username, user.password);
      const { client: other } = await loggedInClient(app);
      const update = { 'app.settings.theme': 'dark', 'app.count': 3 };
      assert.equal((await client.call('POST', '/api/user/metadata', { update })).status, 'ok');
      for (const session of [client, second]) {
        const [event] = await newEvents(session, 'user_metadata');
        assert.deepEqual(
          { ...event, id: 0, time: 0 },
          { id: 0, time: 0, event: 'user_metadata', update, delete: [] },
        );
      }
      assert.deepEqual(await newEvents(other), []);
      assert.deepEqual((await second.call('GET', '/api/user/metadata')).metadata, update);
      assert.deepEqual((await client.call('GET', '/api/user/metadata?domain=app.settings')).metadata, {
        'app.settings.theme': 'dark',
      });
      assert.deepEqual((await client.call('GET', '/api/user/metadata?keys=app.count')).metadata, {
        'app.count': 3,
      });
      assert.deepEqual((await other.call('GET', '/api/user/metadata')).metadata, {});

      assert.equal((await client.call('POST', '/api/user/metadata', { delete: ['app.count'] })).status, 'ok');
      assert.deepEqual((await newEvents(second, 'user_metadata'))[0]?.delete, ['app.count']);
      assert.equal(
        (await client.call('POST', '/api/user/metadata?noevent', { update: { 'ab.cd': 1 } })).status,
        'ok',
      );
      assert.deepEqual(await newEvents(second, 'user_metadata'), []);
      assert.equal(
        (await client.call('POST', '/api/user/metadata?nostore', { update: { 'ab.cd': 2 } })).status,
        'ok',
      );
      assert.equal((await newEvents(second, 'user_metadata')).length, 1);
      assert.deepEqual((await client.call('GET', '/api/user/metadata')).metadata, {
        'ab.cd': 1,
        'app.settings.theme': 'dark',
      });
      const large = { update: { 'ab.cd': 'x'.repeat(100 * 1024) } };
      assert.equal((await client.call('POST', '/api/user/metadata', large)).status, 'too-large');
      assert.equal(
        (await client.call('POST', '/api/user/metadata', { update: { bad: 1 } })).status,
        'wrong-syntax',
      );
      assert.equal((await client.call('GET', '/api/user/metadata?keys=ab.cd,x')).status, 'wrong-syntax');
      assert.equal(
        ((await client.call('GET', '/api/user/metadata')).metadata as Record<string, unknown>)['ab.cd'],
        1,
      );
      const anonymous = new Client(app);
      await anonymous.open();
      assert.equal((await anonymous.call('GET', '/api/user/metadata')).status, 'no-auth');
    });

    test('bodies past what one statement takes are refused with their status and change nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      assert.equal(
        (await client.call('POST', '/api/user/metadata', { update: { 'ab.cd': 1 } })).status,
        'ok',
      );
      const many = Object.fromEntries(Array.from({ length: 25_000 }, (_, i) => [`kk${i}.vv`, 0]));
      const manyDeletes = Array.from({ length: 1001 }, (_, i) => `kk${i}.vv`);
      for (const body of [
        { update: many },
        { delete: manyDeletes },
        { update: { 'ab.cd': 2 }, delete: ['ab.cd'] },
      ]) {
        // Without the event, whose own bound would answer too-large first.
        const answer = await client.call('POST', '/api/user/metadata?noevent', body);
        assert.equal(answer.status, 'wrong-syntax', JSON.stringify(answer));
      }
      assert.deepEqual((await client.call('GET', '/api/user/metadata')).metadata, { 'ab.cd': 1 });
    });
  });
}
