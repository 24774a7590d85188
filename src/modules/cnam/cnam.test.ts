import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildPartner, buildUser, Client, DIALECTS } from '../../../test/helper.js';

for (const dialect of DIALECTS) {
  describe(`caller names (${dialect})`, () => {
    test('/api/user/cnam: set, get, "" removes; the user\'s own name outranks the usergroup\'s; statuses', async (t) => {
      const app = await build(t, { dialect });
      const partner = await buildPartner(app);
      await app.services.partners.setRights(partner.uuid, ['usergroup']);
      const partnerClient = new Client(app);
      await partnerClient.open();
      await partnerClient.call('POST', '/api/session', { partner: partner.name, key: partner.key });
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      const bob = await buildUser(app);
      const client = new Client(app);
      await client.login(user.username, user.password);
      const bobClient = new Client(app);
      await bobClient.login(bob.username, bob.password);
      const { cnams } = app.services;

      assert.deepEqual(await client.call('GET', '/api/user/cnam'), { status: 'ok' });
      assert.equal((await client.call('POST', '/api/user/cnam', { cnam: 'Ada L.' })).status, 'ok');
      assert.deepEqual(await client.call('GET', '/api/user/cnam'), { status: 'ok', cnam: 'Ada L.' });
      assert.deepEqual(await bobClient.call('GET', '/api/user/cnam'), { status: 'ok' }, 'one name per user');
      for (const [body, status] of [
        [{ cnam: 'x'.repeat(51) }, 'wrong-syntax'],
        [{ cnam: 5 }, 'wrong-syntax'],
        [{}, 'missing-element'],
      ] as const)
        assert.equal(
          (await client.call('POST', '/api/user/cnam', body)).status,
          status,
          JSON.stringify(body),
        );
      assert.equal((await client.call('POST', '/api/user/cnam', { cnam: 'x'.repeat(50) })).status, 'ok');

      // The group's name applies to members without their own.
      const group = (await partnerClient.call('POST', '/api/partner/usergroup', {})).group_uuid as string;
      await partnerClient.call('POST', `/api/partner/usergroup/${group}/user`, {
        users: { add: [user.uuid] },
      });
      await partnerClient.call('POST', `/api/partner/usergroup/${group}/cnam`, { cnam: 'Acme' });
      assert.equal(await cnams.callerNameOf(user.uuid), 'x'.repeat(50));
      assert.equal((await client.call('POST', '/api/user/cnam', { cnam: '' })).status, 'ok');
      assert.deepEqual(await client.call('GET', '/api/user/cnam'), { status: 'ok' });
      assert.equal(await cnams.callerNameOf(user.uuid), 'Acme');
      assert.equal(await cnams.callerNameOf(bob.uuid), undefined);

      // The name goes with the user; the group's with the group.
      await bobClient.call('POST', '/api/user/cnam', { cnam: 'Bob' });
      await app.services.users.deleteUser(bob.uuid);
      assert.equal(await cnams.callerNameOf(bob.uuid), undefined);
      await partnerClient.call('POST', `/api/partner/usergroup/${group}/user`, {
        users: { delete: [user.uuid] },
      });
      assert.equal((await partnerClient.call('DELETE', `/api/partner/usergroup/${group}`)).status, 'ok');
      assert.equal(
        (await app.database.db.selectFrom('usergroup_cnam').selectAll().execute()).length,
        0,
        'the group name went with the group',
      );

      assert.equal((await partnerClient.call('GET', '/api/user/cnam')).status, 'no-auth');
      assert.equal(
        (await new Client(app).call('POST', '/api/user/cnam', { cnam: 'x' })).status,
        'no-session',
      );
    });
  });
}
