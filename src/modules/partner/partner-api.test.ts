import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Value } from 'typebox/value';
import { build, buildPartner, buildUser, Client, DIALECTS } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';
import { newUuid } from '../../platform/ids.js';
import { UUID_PATTERN } from '../../platform/object-store/schema.js';
import { effectiveSwitches } from '../phone/index.js';
import { ListPartnerPhonesAnswer } from './partner-api.schema.js';

async function partnerClient(
  app: App,
  rights: Parameters<App['services']['partners']['setRights']>[1] = ['phone'],
) {
  const partner = await buildPartner(app);
  await app.services.partners.setRights(partner.uuid, rights);
  const client = new Client(app);
  await client.open();
  const answer = await client.call('POST', '/api/session', { partner: partner.name, key: partner.key });
  assert.equal(answer.status, 'ok');
  return { client, partner };
}

async function userClient(app: App, username: string, password: string) {
  const client = new Client(app);
  await client.login(username, password);
  return client;
}

for (const dialect of DIALECTS) {
  describe(`partner users (${dialect})`, () => {
    test('paged list by creation; start, order, count; only own users; wrong-user, wrong-syntax, no-auth', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app);
      const { client: other, partner: otherPartner } = await partnerClient(app);
      const own = [];
      for (let i = 0; i < 5; i++) own.push((await buildUser(app, { partnerUuid: partner.uuid })).uuid);
      const foreign = await buildUser(app, { partnerUuid: otherPartner.uuid });
      await buildUser(app);
      const sorted = [...own].sort(); // all created within a second or two: order by (created, uuid)
      const all = (await client.call('GET', '/api/partner/user')).users as string[];
      assert.deepEqual([...all].sort(), sorted);
      assert.equal(all.length, 5);
      assert.deepEqual((await client.call('GET', '/api/partner/user?count=2')).users, all.slice(0, 2));
      assert.deepEqual(
        (await client.call('GET', `/api/partner/user?start=${all[1]}&count=2`)).users,
        all.slice(2, 4),
      );
      assert.deepEqual((await client.call('GET', '/api/partner/user?order=desc')).users, [...all].reverse());
      assert.deepEqual(
        (await client.call('GET', `/api/partner/user?order=desc&start=${all[2]}`)).users,
        all.slice(0, 2).reverse(),
      );
      assert.deepEqual((await client.call('GET', '/api/partner/user?from=4102444800')).users, []);
      assert.deepEqual((await other.call('GET', '/api/partner/user')).users, [foreign.uuid]);
      for (const [query, status] of [
        [`start=${foreign.uuid}`, 'wrong-user'],
        [`start=${newUuid()}`, 'wrong-user'],
        ['count=0', 'wrong-syntax'],
        ['count=501', 'wrong-syntax'],
        ['from=10&to=5', 'wrong-syntax'],
      ] as const) {
        assert.equal((await client.call('GET', `/api/partner/user?${query}`)).status, status, query);
      }
      assert.equal((await client.call('GET', '/api/partner/user?count=500')).status, 'ok');
      const user = await buildUser(app);
      const plain = await userClient(app, user.username, user.password);
      assert.equal((await plain.call('GET', '/api/partner/user')).status, 'no-auth');
      assert.equal((await new Client(app).call('GET', '/api/partner/user')).status, 'no-session');
    });

    test('the partner user object, phone map only with the phone right; wrong-user', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app);
      const { client: other } = await partnerClient(app);
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      await app.services.features.createPack('basic');
      await app.services.features.assignPack(user.uuid, 'basic');
      await app.services.phones.addNumber('+4930700001', { partnerUuid: partner.uuid });
      await app.services.phones.assignNumber('+4930700001', { userUuid: user.uuid });
      await app.services.phones.setSwitches('+4930700001', { fax_enable: false });
      const expected = {
        status: 'ok',
        user: {
          username: user.username,
          firstname: 'Ada',
          lastname: 'Lovelace',
          display_name: 'Ada Lovelace',
          country_code: '+49',
          ignore_ip_whitelisting: false,
          email: user.email,
          language: 'de',
        },
        phone: {
          '+4930700001': {
            conference_enable: true,
            fax_enable: false,
            recording_enable: true,
            notification_attachment: false,
          },
        },
        feature: { pack: ['basic', 'default'] },
      };
      assert.deepEqual(await client.call('GET', `/api/partner/user/${user.uuid}`), expected);
      await app.services.partners.setRights(partner.uuid, []);
      const { phone: _phone, ...withoutPhone } = expected;
      assert.deepEqual(await client.call('GET', `/api/partner/user/${user.uuid}`), withoutPhone);
      assert.equal((await other.call('GET', `/api/partner/user/${user.uuid}`)).status, 'wrong-user');
      assert.equal((await client.call('GET', `/api/partner/user/${newUuid()}`)).status, 'wrong-user');
      const loner = await buildUser(app);
      assert.equal((await client.call('GET', `/api/partner/user/${loner.uuid}`)).status, 'wrong-user');
      assert.equal((await client.call('GET', '/api/partner/user/nope')).status, 'wrong-syntax');
    });

    test('POST: settings and packs in one go; disabled ends sessions; deleted; wrong-user, wrong-pack', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app);
      const { client: other } = await partnerClient(app);
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      await app.services.features.createPack('basic');
      await app.services.features.createPack('extra');
      await app.services.features.assignPack(user.uuid, 'basic');
      const session = await userClient(app, user.username, user.password);
      await newEvents(session);
      const post = (c: Client, body: object, uuid = user.uuid) =>
        c.call('POST', `/api/partner/user/${uuid}`, body);

      assert.equal(
        (
          await post(client, {
            country_code: '+43',
            ignore_ip_whitelisting: true,
            feature: { pack: { add: ['extra', 'extra'], delete: ['basic'] } },
          })
        ).status,
        'ok',
      );
      const view = await client.call('GET', `/api/partner/user/${user.uuid}`);
      assert.equal((view.user as { country_code: string }).country_code, '+43');
      assert.equal((view.user as { ignore_ip_whitelisting: boolean }).ignore_ip_whitelisting, true);
      assert.deepEqual(view.feature, { pack: ['default', 'extra'] });
      assert.equal((await newEvents(session, 'user_modify')).length, 1);

      // All or nothing: an unknown pack leaves the country code as it was.
      assert.equal(
        (await post(client, { country_code: '+1', feature: { pack: { add: ['nope'] } } })).status,
        'wrong-pack',
      );
      assert.equal(
        ((await client.call('GET', `/api/partner/user/${user.uuid}`)).user as { country_code: string })
          .country_code,
        '+43',
      );
      for (const [body, status] of [
        [{ country_code: '49' }, 'wrong-syntax'],
        [{ disabled: 'yes' }, 'wrong-syntax'],
        [{ feature: { pack: { add: ['a b'] } } }, 'wrong-syntax'],
      ] as const) {
        assert.equal((await post(client, body)).status, status, JSON.stringify(body));
      }
      assert.equal((await post(other, { disabled: true })).status, 'wrong-user');
      assert.equal((await post(client, {}, newUuid())).status, 'wrong-user');
      assert.equal((await session.call('GET', '/api/user')).status, 'ok');

      assert.equal((await post(client, { disabled: true })).status, 'ok');
      assert.equal((await session.call('GET', '/api/user')).status, 'no-session');
      const again = new Client(app);
      await again.open();
      assert.equal(
        (await again.call('POST', '/api/session', { username: user.username, password: user.password }))
          .status,
        'wrong-credentials',
      );
      assert.equal((await post(client, { disabled: false })).status, 'ok');
      const back = await userClient(app, user.username, user.password);

      assert.equal((await post(client, { deleted: false })).status, 'ok');
      assert.equal((await post(client, { deleted: true })).status, 'ok');
      assert.equal((await back.call('GET', '/api/user')).status, 'no-session');
      assert.equal(await app.services.users.findUser(user.uuid), undefined);
      assert.equal((await client.call('GET', `/api/partner/user/${user.uuid}`)).status, 'wrong-user');
      assert.equal((await post(client, { deleted: true })).status, 'wrong-user');
    });

    test('recovery code for POST /api/password; wrong-user', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app);
      const { client: other } = await partnerClient(app);
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      assert.equal((await other.call('POST', `/api/partner/recovery/${user.uuid}`, {})).status, 'wrong-user');
      assert.equal(
        (await client.call('POST', `/api/partner/recovery/${newUuid()}`, {})).status,
        'wrong-user',
      );
      const answer = await client.call('POST', `/api/partner/recovery/${user.uuid}`, {});
      assert.equal(answer.status, 'ok');
      const anonymous = new Client(app);
      await anonymous.open();
      assert.equal(
        (
          await anonymous.call('POST', '/api/password', {
            username: user.username,
            code: answer.code,
            password: 'new-secret',
          })
        ).status,
        'ok',
      );
      await userClient(app, user.username, 'new-secret');
    });
  });

  describe(`partner phones (${dialect})`, () => {
    test('create, update, delete with every setting and rule; list the held numbers by number', async (t) => {
      const app = await build(t, { dialect });
      const { phones } = app.services;
      const { client, partner } = await partnerClient(app);
      const { client: other, partner: otherPartner } = await partnerClient(app);
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      const second = await buildUser(app, { partnerUuid: partner.uuid });
      const foreignUser = await buildUser(app, { partnerUuid: otherPartner.uuid });
      for (const n of ['+4930600001', '+4930600002', '+4930600003', '+4930600004'])
        await phones.addNumber(n, { partnerUuid: partner.uuid });
      await phones.addNumber('+4930699999', { partnerUuid: otherPartner.uuid });
      await phones.addNumber('+4930688888');
      const session = await userClient(app, user.username, user.password);
      await newEvents(session);
      const post = (c: Client, body: object, uuid = user.uuid) =>
        c.call('POST', `/api/partner/phone/${uuid}`, body);

      assert.equal(
        (
          await post(client, {
            create: {
              '+4930600001': {
                dialplan_enable: true,
                call_enable: true,
                notification_email: 'n@example.com',
                notification_attachment: true,
                p_asserted_identity: '+4930600009',
              },
              '+4930600002': {},
            },
          })
        ).status,
        'ok',
      );
      assert.equal((await newEvents(session, 'phone_modify')).length, 1);
      const own = (await session.call('GET', '/api/phone')).phone as Record<string, Record<string, unknown>>;
      assert.deepEqual(own['+4930600001'], {
        dialplan_enable: true,
        call_enable: true,
        recording_enable: true,
        fax_enable: true,
        conference_enable: true,
        play_announcement_only: false,
        p_asserted_identity: '+4930600009',
        locked: true,
        answer: 'legacy',
        notification_email: 'n@example.com',
        notification_attachment: true,
      });
      assert.equal(own['+4930600002']?.answer, 'disabled');

      assert.equal(
        (
          await post(client, {
            update: {
              '+4930600001': {
                p_asserted_identity: null,
                notification_email: '',
                play_announcement_only: true,
              },
            },
          })
        ).status,
        'ok',
      );
      const updated = (
        (await session.call('GET', '/api/phone')).phone as Record<string, Record<string, unknown>>
      )['+4930600001'];
      assert.equal(updated?.p_asserted_identity, undefined);
      assert.equal(updated?.notification_email, undefined);
      assert.equal(updated?.play_announcement_only, true);

      assert.deepEqual((await client.call('GET', '/api/partner/phone')).phones, {
        '+4930600001': user.uuid,
        '+4930600002': user.uuid,
      });
      assert.deepEqual((await client.call('GET', '/api/partner/phone?start=%2B4930600001&count=2')).phones, {
        '+4930600002': user.uuid,
      });
      assert.deepEqual((await other.call('GET', '/api/partner/phone')).phones, {}, 'its pool number is free');

      for (const [c, body, uuid, status] of [
        [client, { create: { '+4930600001': {} } }, second.uuid, 'phone-duplicate'],
        [client, { create: { '+4930600001': {} } }, user.uuid, 'phone-duplicate'],
        [client, { create: { '+4930699999': {} } }, user.uuid, 'phone-forbidden'],
        [client, { create: { '+4930688888': {} } }, user.uuid, 'phone-forbidden'],
        [client, { create: { '+4930611111': {} } }, user.uuid, 'phone-forbidden'],
        [client, { update: { '+4930600003': {} } }, user.uuid, 'wrong-phone'],
        [client, { update: { '+4930600001': {} } }, second.uuid, 'wrong-phone'],
        [client, { delete: ['+4930600002'] }, second.uuid, 'wrong-phone'],
        [client, { create: { '+4930600003': {} } }, foreignUser.uuid, 'wrong-user'],
        [other, { create: { '+4930699999': {} } }, user.uuid, 'wrong-user'],
        [client, { create: { '+4930600003': {} } }, newUuid(), 'wrong-user'],
        [client, { update: { '+4930600001': { announcement: newUuid() } } }, user.uuid, 'wrong-syntax'],
        [client, { update: { '+4930600001': { fax_enable: 1 } } }, user.uuid, 'wrong-syntax'],
        [client, { create: { '0306': {} } }, user.uuid, 'wrong-syntax'],
        [client, { delete: ['x'] }, user.uuid, 'wrong-syntax'],
        // All or nothing: the good create is undone by the bad update.
        [client, { create: { '+4930600003': {} }, update: { '+4930600004': {} } }, user.uuid, 'wrong-phone'],
      ] as const) {
        assert.equal((await post(c, body, uuid)).status, status, JSON.stringify(body));
      }
      assert.equal((await phones.findNumber('+4930600003'))?.user, null);

      assert.equal((await post(client, { delete: ['+4930600002'] })).status, 'ok');
      const taken = await phones.findNumber('+4930600002');
      assert.deepEqual([taken?.user, taken?.partner, taken?.settings], [null, partner.uuid, {}]);
      assert.deepEqual(Object.keys((await session.call('GET', '/api/phone')).phone as object), [
        '+4930600001',
      ]);

      // Without the right to assign numbers: phone-forbidden.
      await app.services.partners.setRights(partner.uuid, ['callfilter']);
      assert.equal((await post(client, { create: { '+4930600003': {} } })).status, 'phone-forbidden');
      assert.equal((await client.call('GET', '/api/partner/phone')).status, 'phone-forbidden');
      assert.equal((await client.call('GET', '/api/partner/phone?count=501')).status, 'wrong-syntax');
    });
  });
}

describe('GET /api/partner/phone', () => {
  for (const dialect of DIALECTS)
    test(`number -> user UUID for held pool numbers only, paged over them (${dialect})`, async (t) => {
      const app = await build(t, { dialect });
      const { phones } = app.services;
      const { client, partner } = await partnerClient(app);
      const alice = await buildUser(app, { partnerUuid: partner.uuid });
      const bob = await buildUser(app, { partnerUuid: partner.uuid });
      // Free pool numbers sit between and around the held ones.
      const pool = ['+4930700001', '+4930700002', '+4930700003', '+4930700004', '+4930700005', '+4930700006'];
      for (const n of pool) await phones.addNumber(n, { partnerUuid: partner.uuid });
      const give = (user: string, number: string) =>
        client.call('POST', `/api/partner/phone/${user}`, { create: { [number]: {} } });
      assert.equal((await give(alice.uuid, '+4930700002')).status, 'ok');
      assert.equal((await give(bob.uuid, '+4930700004')).status, 'ok');
      assert.equal((await give(alice.uuid, '+4930700005')).status, 'ok');
      const held = { '+4930700002': alice.uuid, '+4930700004': bob.uuid, '+4930700005': alice.uuid };

      const whole = await client.call('GET', '/api/partner/phone');
      assert.equal(whole.status, 'ok');
      assert.deepEqual(whole.phones, held);
      assert.ok(Value.Check(ListPartnerPhonesAnswer, whole), 'the answer validates against its schema');
      for (const value of Object.values(whole.phones as object))
        assert.match(value, new RegExp(UUID_PATTERN), 'every value a UUID string');

      // A client paging by the last number it got sees each held number once and then an empty page.
      const pages: object[] = [];
      let start = '';
      for (;;) {
        const page = await client.call('GET', `/api/partner/phone?count=1${start}`);
        const numbers = Object.keys(page.phones as object);
        if (numbers.length === 0) break;
        pages.push(page.phones as object);
        start = `&start=${encodeURIComponent(numbers.at(-1)!)}`;
      }
      assert.deepEqual(
        pages,
        Object.entries(held).map(([n, u]) => ({ [n]: u })),
      );
      // A free number as `start` works as any other.
      const after = await client.call('GET', `/api/partner/phone?start=${encodeURIComponent('+4930700003')}`);
      assert.deepEqual(after.phones, { '+4930700004': bob.uuid, '+4930700005': alice.uuid });
      // Taken back into the pool, a number leaves the list.
      await client.call('POST', `/api/partner/phone/${bob.uuid}`, { delete: ['+4930700004'] });
      assert.deepEqual((await client.call('GET', '/api/partner/phone')).phones, {
        '+4930700002': alice.uuid,
        '+4930700005': alice.uuid,
      });
    });
});

describe('effective number switches', () => {
  test('dialplan_enable takes priority; the call API only with call_enable alone', () => {
    assert.deepEqual(effectiveSwitches({}), {
      dialplan: false,
      fax: true,
      conference: true,
      recording: true,
      call_api: false,
    });
    assert.deepEqual(effectiveSwitches({ dialplan_enable: true, call_enable: true }), {
      dialplan: true,
      fax: false,
      conference: false,
      recording: false,
      call_api: false,
    });
    assert.equal(effectiveSwitches({ call_enable: true }).call_api, false);
    assert.equal(
      effectiveSwitches({
        call_enable: true,
        fax_enable: false,
        conference_enable: false,
        recording_enable: false,
      }).call_api,
      true,
    );
  });
});
