import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildUser, Client, DIALECTS } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import { partnerClient } from '../../../test/security-telephony.js';
import { systemClock } from '../../platform/clock.js';
import { newUuid, nowSeconds, uuidSortKey } from '../../platform/ids.js';
import { MAX_USERGROUPS } from './index.js';

async function createGroup(client: Client, body: object = {}): Promise<string> {
  const answer = await client.call('POST', '/api/partner/usergroup', body);
  assert.equal(answer.status, 'ok', JSON.stringify(answer));
  return answer.group_uuid as string;
}

type Call = readonly [Client, 'GET' | 'POST' | 'DELETE', string, unknown, string];

async function expectStatuses(calls: readonly Call[]): Promise<void> {
  for (const [client, method, url, body, status] of calls)
    assert.equal(
      (await client.call(method, url, body)).status,
      status,
      `${method} ${url} ${JSON.stringify(body)?.slice(0, 80)}`,
    );
}

for (const dialect of DIALECTS) {
  describe(`partner usergroups (${dialect})`, () => {
    test('create, change, list paged, delete; prefixes unique; every status; a second partner changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await partnerClient(app, ['usergroup']);
      const { client: other } = await partnerClient(app, ['usergroup']);
      const sales = await createGroup(client, { description: 'Sales', prefix: 3 });
      const support = await createGroup(client);
      const foreign = await createGroup(other, { description: 'theirs', prefix: 3 }); // prefixes are per partner
      const list = await client.call('GET', '/api/partner/usergroup');
      assert.deepEqual(list, {
        status: 'ok',
        usergroups: {
          [sales]: { description: 'Sales', prefix: 3 },
          [support]: { description: '', prefix: 0 },
        },
      });
      assert.deepEqual(Object.keys(list.usergroups as object), [sales, support], 'creation order');
      assert.deepEqual((await client.call('GET', '/api/partner/usergroup?count=1')).usergroups, {
        [sales]: { description: 'Sales', prefix: 3 },
      });
      assert.deepEqual(
        Object.keys((await client.call('GET', `/api/partner/usergroup?start=${sales}`)).usergroups!),
        [support],
      );
      assert.deepEqual(
        Object.keys((await client.call('GET', '/api/partner/usergroup?order=desc')).usergroups!),
        [support, sales],
      );
      assert.deepEqual((await client.call('GET', '/api/partner/usergroup?from=4102444800')).usergroups, {});
      assert.deepEqual(Object.keys((await other.call('GET', '/api/partner/usergroup')).usergroups!), [
        foreign,
      ]);

      const url = `/api/partner/usergroup/${sales}`;
      assert.equal((await client.call('POST', url, { description: 'Sales EU' })).status, 'ok');
      await expectStatuses([
        [client, 'POST', '/api/partner/usergroup', { prefix: 3 }, 'already-exist'],
        [client, 'POST', `/api/partner/usergroup/${support}`, { prefix: 3 }, 'already-exist'],
        [client, 'POST', '/api/partner/usergroup', { prefix: 10 }, 'wrong-syntax'],
        [client, 'POST', '/api/partner/usergroup', { prefix: -1 }, 'wrong-syntax'],
        [client, 'POST', '/api/partner/usergroup', { prefix: '3' }, 'wrong-syntax'],
        [client, 'POST', '/api/partner/usergroup', { description: 'x'.repeat(201) }, 'wrong-syntax'],
        [client, 'POST', url, { description: 'x'.repeat(201) }, 'wrong-syntax'],
        [client, 'POST', url, { prefix: 12 }, 'wrong-syntax'],
        [client, 'GET', `/api/partner/usergroup?start=${foreign}`, undefined, 'wrong-usergroup'],
        [client, 'GET', `/api/partner/usergroup?start=${newUuid()}`, undefined, 'wrong-usergroup'],
        [client, 'GET', '/api/partner/usergroup?count=0', undefined, 'wrong-syntax'],
        [client, 'GET', '/api/partner/usergroup?count=501', undefined, 'wrong-syntax'],
        [client, 'GET', '/api/partner/usergroup?from=10&to=5', undefined, 'wrong-syntax'],
        [client, 'POST', `/api/partner/usergroup/${newUuid()}`, { description: 'x' }, 'wrong-usergroup'],
        [client, 'POST', '/api/partner/usergroup/nope', { description: 'x' }, 'wrong-syntax'],
        [other, 'POST', url, { description: 'mine', prefix: 5 }, 'wrong-usergroup'],
        [other, 'DELETE', url, undefined, 'wrong-usergroup'],
        [other, 'GET', `${url}/user`, undefined, 'wrong-usergroup'],
        [client, 'GET', `/api/partner/usergroup/${foreign}/user`, undefined, 'wrong-usergroup'],
      ]);
      assert.equal((await client.call('GET', '/api/partner/usergroup?count=500')).status, 'ok');
      // prefix 0 removes it; then another group may take it.
      assert.equal((await client.call('POST', url, { prefix: 0 })).status, 'ok');
      assert.equal(
        (await client.call('POST', `/api/partner/usergroup/${support}`, { prefix: 3 })).status,
        'ok',
      );
      assert.deepEqual((await client.call('GET', '/api/partner/usergroup')).usergroups, {
        [sales]: { description: 'Sales EU', prefix: 0 },
        [support]: { description: '', prefix: 3 },
      });
      assert.deepEqual((await other.call('GET', '/api/partner/usergroup')).usergroups, {
        [foreign]: { description: 'theirs', prefix: 3 },
      });
      assert.equal((await client.call('DELETE', `/api/partner/usergroup/${support}`)).status, 'ok');
      assert.equal(
        (await client.call('DELETE', `/api/partner/usergroup/${support}`)).status,
        'wrong-usergroup',
      );
      assert.deepEqual(Object.keys((await client.call('GET', '/api/partner/usergroup')).usergroups!), [
        sales,
      ]);

      // Without the right `usergroup` every route is access-denied, also for the partner's own group.
      const { client: plain } = await partnerClient(app, ['phone']);
      const { client: revoked, partner: revokedPartner } = await partnerClient(app, ['usergroup']);
      const own = await createGroup(revoked);
      await app.services.partners.setRights(revokedPartner.uuid, ['callfilter']);
      for (const c of [plain, revoked])
        await expectStatuses([
          [c, 'POST', '/api/partner/usergroup', {}, 'access-denied'],
          [c, 'GET', '/api/partner/usergroup', undefined, 'access-denied'],
          [c, 'POST', `/api/partner/usergroup/${own}`, { description: 'x' }, 'access-denied'],
          [c, 'DELETE', `/api/partner/usergroup/${own}`, undefined, 'access-denied'],
          [c, 'GET', `/api/partner/usergroup/${own}/user`, undefined, 'access-denied'],
          [c, 'POST', `/api/partner/usergroup/${own}/user`, { users: { add: [] } }, 'access-denied'],
        ]);
      await app.services.partners.setRights(revokedPartner.uuid, ['usergroup']);
      assert.equal((await revoked.call('GET', `/api/partner/usergroup/${own}/user`)).status, 'ok');

      const user = await buildUser(app);
      const userClient = new Client(app);
      await userClient.login(user.username, user.password);
      assert.equal((await userClient.call('GET', '/api/partner/usergroup')).status, 'no-auth');
      assert.equal((await new Client(app).call('GET', '/api/partner/usergroup')).status, 'no-session');
    });

    test('members: one group per user, usergroup in the user objects, user_modify, not-empty, wrong-user; deleted users leave', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app, ['usergroup', 'enterprise']);
      const { client: other, partner: otherPartner } = await partnerClient(app, ['usergroup']);
      const [alice, bob, carol] = [
        await buildUser(app, { partnerUuid: partner.uuid }),
        await buildUser(app, { partnerUuid: partner.uuid }),
        await buildUser(app, { partnerUuid: partner.uuid }),
      ];
      const stranger = await buildUser(app, { partnerUuid: otherPartner.uuid });
      const loner = await buildUser(app);
      const aliceClient = new Client(app);
      await aliceClient.login(alice.username, alice.password);
      await newEvents(aliceClient);
      const sales = await createGroup(client, { description: 'Sales', prefix: 4 });
      const support = await createGroup(client);
      const theirs = await createGroup(other);
      const members = (group: string) => `/api/partner/usergroup/${group}/user`;

      assert.deepEqual(await client.call('GET', members(sales)), {
        status: 'ok',
        usergroup: { description: 'Sales', prefix: 4, prefix_active: false, users: [] },
      });
      assert.equal(
        (await client.call('POST', members(sales), { users: { add: [alice.uuid, bob.uuid] } })).status,
        'ok',
      );
      assert.deepEqual(
        ((await client.call('GET', members(sales))).usergroup as { users: string[] }).users.sort(),
        [alice.uuid, bob.uuid].sort(),
      );
      assert.deepEqual(
        (await newEvents(aliceClient)).map((e) => e.event),
        ['user_modify'],
      );
      assert.equal(
        ((await aliceClient.call('GET', '/api/user')).user as { usergroup?: string }).usergroup,
        sales,
      );
      assert.equal(
        ((await client.call('GET', `/api/partner/user/${alice.uuid}`)).user as { usergroup?: string })
          .usergroup,
        sales,
      );
      assert.equal(
        ((await client.call('GET', `/api/partner/user/${carol.uuid}`)).user as { usergroup?: string })
          .usergroup,
        undefined,
      );
      assert.equal(await app.services.usergroups.usergroupOf(alice.uuid), sales);

      // The prefix is active only with the enterprise flag.
      assert.equal(
        (await client.call('POST', '/api/partner/enterprise', { group_prefix_enable: true })).status,
        'ok',
      );
      assert.equal(
        ((await client.call('GET', members(sales))).usergroup as { prefix_active: boolean }).prefix_active,
        true,
      );
      assert.equal(
        ((await client.call('GET', members(support))).usergroup as { prefix_active: boolean }).prefix_active,
        false,
      );

      // Adding a member again is no error and sends nothing.
      assert.equal(
        (await client.call('POST', members(sales), { users: { add: [alice.uuid] } })).status,
        'ok',
      );
      assert.deepEqual(await newEvents(aliceClient), []);
      await expectStatuses([
        [client, 'POST', members(support), { users: { add: [carol.uuid, alice.uuid] } }, 'already-grouped'],
        [client, 'POST', members(support), { users: { add: [carol.uuid, stranger.uuid] } }, 'wrong-user'],
        [client, 'POST', members(support), { users: { add: [carol.uuid, loner.uuid] } }, 'wrong-user'],
        [client, 'POST', members(support), { users: { delete: [newUuid()] } }, 'wrong-user'],
        [client, 'POST', members(support), { users: { add: ['nope'] } }, 'wrong-syntax'],
        [client, 'POST', members(support), { users: { add: Array(501).fill(carol.uuid) } }, 'wrong-syntax'],
        [client, 'POST', members(support), { users: [carol.uuid] }, 'wrong-syntax'],
        [client, 'POST', members(support), {}, 'missing-element'],
        [client, 'POST', members(theirs), { users: { add: [carol.uuid] } }, 'wrong-usergroup'],
        [client, 'POST', members(newUuid()), { users: { add: [carol.uuid] } }, 'wrong-usergroup'],
        [other, 'POST', members(sales), { users: { delete: [alice.uuid] } }, 'wrong-usergroup'],
        [other, 'POST', members(theirs), { users: { add: [carol.uuid] } }, 'wrong-user'],
        [other, 'GET', `/api/partner/user/${alice.uuid}`, undefined, 'wrong-user'],
        [client, 'DELETE', `/api/partner/usergroup/${sales}`, undefined, 'not-empty'],
      ]);
      // Nothing changed by the refused calls.
      assert.deepEqual(
        ((await client.call('GET', members(support))).usergroup as { users: string[] }).users,
        [],
      );
      assert.equal(await app.services.usergroups.usergroupOf(carol.uuid), undefined);
      assert.deepEqual(
        ((await other.call('GET', members(theirs))).usergroup as { users: string[] }).users,
        [],
      );

      // Moving a user: out of one group, into another; a user in both lists ends outside.
      assert.equal(
        (await client.call('POST', members(sales), { users: { delete: [alice.uuid, carol.uuid] } })).status,
        'ok',
      );
      assert.equal(
        ((await aliceClient.call('GET', '/api/user')).user as { usergroup?: string }).usergroup,
        undefined,
      );
      assert.deepEqual(
        (await newEvents(aliceClient)).map((e) => e.event),
        ['user_modify'],
      );
      assert.equal(
        (
          await client.call('POST', members(support), {
            users: { add: [alice.uuid, carol.uuid], delete: [carol.uuid] },
          })
        ).status,
        'ok',
      );
      assert.deepEqual(
        ((await client.call('GET', members(support))).usergroup as { users: string[] }).users,
        [alice.uuid],
      );

      // A deleted user leaves its usergroup; the emptied group can then be deleted.
      assert.equal(
        (await client.call('POST', `/api/partner/user/${alice.uuid}`, { deleted: true })).status,
        'ok',
      );
      assert.deepEqual(
        ((await client.call('GET', members(support))).usergroup as { users: string[] }).users,
        [],
      );
      assert.equal((await client.call('DELETE', `/api/partner/usergroup/${support}`)).status, 'ok');
      assert.equal(await app.services.usergroups.usergroupOf(bob.uuid), sales);
    });

    test('credit, extension, limit, zonefilter, cnam: shapes, statuses, a second partner; the call-engine lookups', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app, ['usergroup', 'enterprise']);
      const { client: other, partner: otherPartner } = await partnerClient(app, ['usergroup']);
      const [alice, bob, carol, dave] = [
        await buildUser(app, { partnerUuid: partner.uuid }),
        await buildUser(app, { partnerUuid: partner.uuid }),
        await buildUser(app, { partnerUuid: partner.uuid }),
        await buildUser(app, { partnerUuid: partner.uuid }),
      ];
      const stranger = await buildUser(app, { partnerUuid: otherPartner.uuid });
      const sales = await createGroup(client, { prefix: 5 });
      const support = await createGroup(client, { prefix: 6 });
      const theirs = await createGroup(other);
      await client.call('POST', `/api/partner/usergroup/${sales}/user`, {
        users: { add: [alice.uuid, bob.uuid] },
      });
      await client.call('POST', `/api/partner/usergroup/${support}/user`, { users: { add: [carol.uuid] } });
      await other.call('POST', `/api/partner/usergroup/${theirs}/user`, { users: { add: [stranger.uuid] } });
      const g = (group: string, what: string) => `/api/partner/usergroup/${group}/${what}`;
      const groups = app.services.usergroups;

      // credit
      assert.deepEqual(await client.call('GET', g(sales, 'credit')), { status: 'ok', credit: 0 });
      assert.equal((await client.call('POST', g(sales, 'credit'), { credit: 1500 })).status, 'ok');
      assert.deepEqual(await client.call('GET', g(sales, 'credit')), { status: 'ok', credit: 1500 });
      assert.equal(await app.services.writer.write((w) => groups.setCredit(w, sales, 42)), true);
      assert.equal(await app.services.writer.write((w) => groups.setCredit(w, newUuid(), 42)), false);
      assert.equal(await groups.creditOf(sales), 42);
      // limit
      assert.deepEqual(await client.call('GET', g(sales, 'limit')), { status: 'ok', calls: 0 });
      assert.equal(await groups.callLimitOf(alice.uuid), undefined);
      assert.equal((await client.call('POST', g(sales, 'limit'), { calls: 3 })).status, 'ok');
      assert.deepEqual(await client.call('GET', g(sales, 'limit')), { status: 'ok', calls: 3 });
      assert.deepEqual(await groups.callLimitOf(bob.uuid), { usergroup: sales, calls: 3 });
      assert.equal(await groups.callLimitOf(dave.uuid), undefined);
      // zonefilter
      assert.deepEqual(await client.call('GET', g(sales, 'zonefilter')), { status: 'ok', zones: [] });
      assert.equal(
        (await client.call('POST', g(sales, 'zonefilter'), { zones: ['+49', '+43', '+49'] })).status,
        'ok',
      );
      assert.deepEqual(await client.call('GET', g(sales, 'zonefilter')), {
        status: 'ok',
        zones: ['+49', '+43'],
      });
      assert.deepEqual(await groups.zonesOf(alice.uuid), ['+49', '+43']);
      assert.deepEqual(await groups.zonesOf(carol.uuid), []);
      // extension
      assert.deepEqual(await client.call('GET', g(sales, 'extension')), { status: 'ok', extensions: {} });
      assert.equal(
        (
          await client.call('POST', g(sales, 'extension'), {
            extensions: { [alice.uuid]: '10', [bob.uuid]: '11' },
          })
        ).status,
        'ok',
      );
      assert.equal(
        (await client.call('POST', g(support, 'extension'), { extensions: { [carol.uuid]: '20' } })).status,
        'ok',
      );
      // Members may swap extensions in one call.
      assert.equal(
        (
          await client.call('POST', g(sales, 'extension'), {
            extensions: { [alice.uuid]: '11', [bob.uuid]: '10' },
          })
        ).status,
        'ok',
      );
      assert.deepEqual((await client.call('GET', g(sales, 'extension'))).extensions, {
        [alice.uuid]: '11',
        [bob.uuid]: '10',
      });
      // Inside the group by extension; across groups by prefix + extension only with the enterprise flag.
      assert.equal(await groups.resolveExtension(alice.uuid, '10'), bob.uuid);
      assert.equal(await groups.resolveExtension(alice.uuid, '620'), undefined);
      assert.equal(await groups.resolveExtension(dave.uuid, '10'), undefined);
      await client.call('POST', '/api/partner/enterprise', { group_prefix_enable: true });
      assert.equal(await groups.resolveExtension(alice.uuid, '620'), carol.uuid);
      assert.equal(await groups.resolveExtension(carol.uuid, '511'), alice.uuid);
      assert.equal(await groups.resolveExtension(carol.uuid, '699'), undefined);
      // cnam of the group, and the user's own
      assert.deepEqual(await client.call('GET', g(sales, 'cnam')), { status: 'ok' });
      assert.equal((await client.call('POST', g(sales, 'cnam'), { cnam: 'Acme Sales' })).status, 'ok');
      assert.deepEqual(await client.call('GET', g(sales, 'cnam')), { status: 'ok', cnam: 'Acme Sales' });
      assert.equal(await app.services.cnams.callerNameOf(alice.uuid), 'Acme Sales');
      assert.equal(await app.services.cnams.callerNameOf(dave.uuid), undefined);

      const settings = ['credit', 'extension', 'limit', 'zonefilter', 'cnam'] as const;
      const valid = {
        credit: { credit: 1 },
        extension: { extensions: { [alice.uuid]: '12' } },
        limit: { calls: 1 },
        zonefilter: { zones: ['+1'] },
        cnam: { cnam: 'x' },
      };
      const calls: Call[] = [
        [client, 'POST', g(sales, 'credit'), { credit: -1 }, 'wrong-syntax'],
        [client, 'POST', g(sales, 'credit'), { credit: 1.5 }, 'wrong-syntax'],
        [client, 'POST', g(sales, 'credit'), { credit: 1e13 }, 'wrong-syntax'],
        [client, 'POST', g(sales, 'credit'), {}, 'missing-element'],
        [client, 'POST', g(sales, 'limit'), { calls: 10001 }, 'wrong-syntax'],
        [client, 'POST', g(sales, 'limit'), {}, 'missing-element'],
        [client, 'POST', g(sales, 'zonefilter'), { zones: ['49'] }, 'wrong-syntax'],
        [client, 'POST', g(sales, 'zonefilter'), { zones: Array(101).fill('+49') }, 'wrong-syntax'],
        [client, 'POST', g(sales, 'zonefilter'), {}, 'missing-element'],
        [client, 'POST', g(sales, 'extension'), { extensions: { [alice.uuid]: '1234567' } }, 'wrong-syntax'],
        [client, 'POST', g(sales, 'extension'), { extensions: { [alice.uuid]: 'a1' } }, 'wrong-syntax'],
        [client, 'POST', g(sales, 'extension'), { extensions: { nope: '1' } }, 'wrong-syntax'],
        [
          client,
          'POST',
          g(sales, 'extension'),
          { extensions: { [alice.uuid]: '12', [bob.uuid]: '12' } },
          'already-exist',
        ],
        [client, 'POST', g(sales, 'extension'), { extensions: { [alice.uuid]: '10' } }, 'already-exist'],
        [
          client,
          'POST',
          g(sales, 'extension'),
          { extensions: { [alice.uuid]: '12', [carol.uuid]: '13' } },
          'wrong-user',
        ],
        [client, 'POST', g(sales, 'extension'), { extensions: { [stranger.uuid]: '13' } }, 'wrong-user'],
        [client, 'POST', g(sales, 'cnam'), { cnam: 'x'.repeat(51) }, 'wrong-syntax'],
        [client, 'POST', g(sales, 'cnam'), {}, 'missing-element'],
      ];
      for (const what of settings) {
        calls.push([client, 'GET', g(theirs, what), undefined, 'wrong-usergroup']);
        calls.push([client, 'POST', g(theirs, what), valid[what], 'wrong-usergroup']);
        calls.push([client, 'GET', g(newUuid(), what), undefined, 'wrong-usergroup']);
        calls.push([other, 'GET', g(sales, what), undefined, 'wrong-usergroup']);
        calls.push([other, 'POST', g(sales, what), valid[what], 'wrong-usergroup']);
      }
      await expectStatuses(calls);
      // Nothing of the refused calls changed anything.
      assert.deepEqual(
        [
          (await client.call('GET', g(sales, 'credit'))).credit,
          (await client.call('GET', g(sales, 'limit'))).calls,
          (await client.call('GET', g(sales, 'zonefilter'))).zones,
          (await client.call('GET', g(sales, 'extension'))).extensions,
          (await client.call('GET', g(sales, 'cnam'))).cnam,
          (await other.call('GET', g(theirs, 'credit'))).credit,
          (await other.call('GET', g(theirs, 'cnam'))).cnam,
        ],
        [42, 3, ['+49', '+43'], { [alice.uuid]: '11', [bob.uuid]: '10' }, 'Acme Sales', 0, undefined],
      );
      // "" removes an extension, [] the zone filter, 0 the limit, "" the caller name.
      await client.call('POST', g(sales, 'extension'), { extensions: { [alice.uuid]: '' } });
      assert.deepEqual((await client.call('GET', g(sales, 'extension'))).extensions, { [bob.uuid]: '10' });
      await client.call('POST', g(sales, 'zonefilter'), { zones: [] });
      await client.call('POST', g(sales, 'limit'), { calls: 0 });
      await client.call('POST', g(sales, 'cnam'), { cnam: '' });
      assert.deepEqual(await groups.zonesOf(alice.uuid), []);
      assert.equal(await groups.callLimitOf(alice.uuid), undefined);
      assert.deepEqual(await client.call('GET', g(sales, 'cnam')), { status: 'ok' });
      // Leaving the group takes the extension.
      await client.call('POST', `/api/partner/usergroup/${sales}/user`, { users: { delete: [bob.uuid] } });
      await client.call('POST', `/api/partner/usergroup/${sales}/user`, { users: { add: [bob.uuid] } });
      assert.deepEqual((await client.call('GET', g(sales, 'extension'))).extensions, {});

      // Without the right: access-denied on every setting.
      await app.services.partners.setRights(partner.uuid, ['phone']);
      const denied: Call[] = [];
      for (const what of settings) {
        denied.push([client, 'GET', g(sales, what), undefined, 'access-denied']);
        denied.push([client, 'POST', g(sales, what), valid[what], 'access-denied']);
      }
      await expectStatuses(denied);
    });

    test('bounds and races: 1000 usergroups per partner; two calls grouping one user at once, one wins', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app, ['usergroup']);
      const { client: other } = await partnerClient(app, ['usergroup']);
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      const [a, b] = [await createGroup(client), await createGroup(client)];
      const answers = await Promise.all(
        [a, b].map((group) =>
          client.call('POST', `/api/partner/usergroup/${group}/user`, { users: { add: [user.uuid] } }),
        ),
      );
      assert.deepEqual(answers.map((answer) => answer.status).sort(), ['already-grouped', 'ok']);
      const winner = answers[0]!.status === 'ok' ? a : b;
      assert.equal(await app.services.usergroups.usergroupOf(user.uuid), winner);

      // Two groups asking for one prefix at once: one gets it.
      const prefixed = await Promise.all(
        [1, 2].map(() => client.call('POST', '/api/partner/usergroup', { prefix: 7 })),
      );
      assert.deepEqual(prefixed.map((answer) => answer.status).sort(), ['already-exist', 'ok']);
      const holder = prefixed.find((answer) => answer.status === 'ok')!.group_uuid as string;
      const racing = await Promise.all(
        [a, b].map((group) => client.call('POST', `/api/partner/usergroup/${group}`, { prefix: 8 })),
      );
      assert.deepEqual(racing.map((answer) => answer.status).sort(), ['already-exist', 'ok']);
      await client.call('DELETE', `/api/partner/usergroup/${holder}`);

      // Fill the partner up to the bound directly, then the API refuses one more.
      const rows = Array.from({ length: MAX_USERGROUPS - 2 }, () => {
        const uuid = newUuid();
        return {
          uuid,
          partner_uuid: partner.uuid,
          description: '',
          prefix: 0,
          credit: 0,
          call_limit: 0,
          zonefilter: '[]',
          time: nowSeconds(systemClock),
          sort_key: uuidSortKey(uuid),
        };
      });
      await app.database.db.insertInto('usergroup').values(rows).execute();
      assert.equal((await client.call('POST', '/api/partner/usergroup', {})).status, 'quota-exceeded');
      assert.equal((await other.call('POST', '/api/partner/usergroup', {})).status, 'ok', 'per partner');
      assert.equal((await client.call('DELETE', `/api/partner/usergroup/${rows[0]!.uuid}`)).status, 'ok');
      assert.equal((await client.call('POST', '/api/partner/usergroup', {})).status, 'ok');
    });

    test('BLF: access-denied in no usergroup or towards another group, allowed inside the own group', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app, ['usergroup']);
      const alice = await buildUser(app, { partnerUuid: partner.uuid, username: `blfa${process.pid}` });
      const bob = await buildUser(app, { partnerUuid: partner.uuid });
      const carol = await buildUser(app, { partnerUuid: partner.uuid });
      await app.services.phones.addNumber('+4930555001', { userUuid: bob.uuid });
      await app.services.phones.addNumber('+4930555002', { userUuid: carol.uuid });
      await app.services.phones.addNumber('+4930555003');
      const aliceClient = new Client(app);
      await aliceClient.login(alice.username, alice.password);
      assert.equal((await aliceClient.call('POST', '/api/sip', { password: 'secret1' })).status, 'ok');
      const blf = `/api/sip/${alice.username.toLowerCase()}_01/blf`;
      const subscribe = (number: string) => aliceClient.call('POST', blf, { subscribe: [number] });
      assert.equal((await subscribe('+4930555001')).status, 'access-denied', 'alice in no group');
      assert.equal((await subscribe('+4930555999')).status, 'access-denied', 'no group, unknown number');
      // wrong-sip comes before access-denied: bob's account is no account of alice's.
      const bobClient = new Client(app);
      await bobClient.login(bob.username, bob.password);
      assert.equal((await bobClient.call('POST', '/api/sip', { password: 'secret1' })).status, 'ok');
      const bobBlf = `/api/sip/${bob.username.toLowerCase()}_01/blf`;
      const foreign = await aliceClient.call('POST', bobBlf, { subscribe: ['+4930555999'] });
      assert.equal(foreign.status, 'wrong-sip');
      const team = await createGroup(client);
      const others = await createGroup(client);
      await client.call('POST', `/api/partner/usergroup/${team}/user`, { users: { add: [alice.uuid] } });
      assert.equal((await subscribe('+4930555999')).status, 'wrong-phone', 'in a group, unknown number');
      assert.equal((await subscribe('+4930555001')).status, 'access-denied', 'bob in no group');
      await client.call('POST', `/api/partner/usergroup/${others}/user`, { users: { add: [bob.uuid] } });
      assert.equal((await subscribe('+4930555001')).status, 'access-denied', 'bob in another group');
      assert.equal((await subscribe('+4930555003')).status, 'access-denied', 'a number nobody holds');
      for (const numbers of [
        ['+4930555999', '+4930555001'],
        ['+4930555001', '+4930555999'],
      ]) {
        const mixed = await aliceClient.call('POST', blf, { subscribe: numbers });
        assert.equal(mixed.status, 'access-denied', `access before existence in any order: ${numbers}`);
      }
      assert.deepEqual(
        (await aliceClient.call('GET', blf)).subscriptions,
        [],
        'the refused calls kept nothing',
      );
      await client.call('POST', `/api/partner/usergroup/${team}/user`, { users: { add: [carol.uuid] } });
      assert.equal((await subscribe('+4930555002')).status, 'ok', 'carol in the same group');
      assert.equal(
        (await aliceClient.call('POST', blf, { subscribe: ['+4930555002', '+4930555001'] })).status,
        'access-denied',
      );
      assert.deepEqual((await aliceClient.call('GET', blf)).subscriptions, ['+4930555002']);
      // Unsubscribing needs no group.
      await client.call('POST', `/api/partner/usergroup/${team}/user`, { users: { delete: [alice.uuid] } });
      assert.equal((await aliceClient.call('POST', blf, { unsubscribe: ['+4930555002'] })).status, 'ok');
      assert.deepEqual((await aliceClient.call('GET', blf)).subscriptions, []);
    });
  });
}
