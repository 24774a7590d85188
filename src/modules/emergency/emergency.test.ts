import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildUser, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { partnerClient } from '../../../test/security-telephony.js';
import { newUuid } from '../../platform/ids.js';

for (const dialect of DIALECTS) {
  describe(`partner emergency data (${dialect})`, () => {
    test('set, get, "" deletes, the call-engine lookup; wrong-syntax, wrong-user, access-denied (a second partner: emergency.security.test.ts)', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app, ['emergency']);
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      const loner = await buildUser(app);
      const url = `/api/partner/emergency/${user.uuid}`;
      const { emergency } = app.services;

      assert.deepEqual(await client.call('GET', url), { status: 'ok' });
      assert.equal(await emergency.emergencyDataOf(user.uuid), undefined);
      const full = { uui_header: 'u'.repeat(200), emergency_police: '0301100', emergency_rescue: '0301120' };
      assert.equal((await client.call('POST', url, full)).status, 'ok');
      assert.deepEqual(await client.call('GET', url), { status: 'ok', ...full });
      assert.deepEqual(await emergency.emergencyDataOf(user.uuid), {
        uuiHeader: full.uui_header,
        police: '0301100',
        rescue: '0301120',
      });
      // Fields left out stay; "" deletes one.
      assert.equal((await client.call('POST', url, { emergency_police: '', uui_header: 'x' })).status, 'ok');
      assert.deepEqual(await client.call('GET', url), {
        status: 'ok',
        uui_header: 'x',
        emergency_rescue: '0301120',
      });
      assert.deepEqual(await emergency.emergencyDataOf(user.uuid), { uuiHeader: 'x', rescue: '0301120' });

      for (const [c, method, path, body, status] of [
        [client, 'POST', url, { uui_header: 'u'.repeat(201) }, 'wrong-syntax'],
        [client, 'POST', url, { emergency_police: '12345678901' }, 'wrong-syntax'],
        [client, 'POST', url, { emergency_rescue: 112 }, 'wrong-syntax'],
        [client, 'POST', url, { emergency_rescue: '112', emergency_police: null }, 'wrong-syntax'],
        [client, 'GET', `/api/partner/emergency/${loner.uuid}`, undefined, 'wrong-user'],
        [client, 'GET', `/api/partner/emergency/${newUuid()}`, undefined, 'wrong-user'],
        [client, 'GET', '/api/partner/emergency/nope', undefined, 'wrong-syntax'],
      ] as const)
        assert.equal(
          (await c.call(method, path, body)).status,
          status,
          `${method} ${path} ${JSON.stringify(body)?.slice(0, 60)}`,
        );
      assert.deepEqual(await client.call('GET', url), {
        status: 'ok',
        uui_header: 'x',
        emergency_rescue: '0301120',
      });

      // Without the right: access-denied for the partner's own user, nothing changes.
      await app.services.partners.setRights(partner.uuid, ['phone', 'usergroup']);
      assert.equal((await client.call('GET', url)).status, 'access-denied');
      assert.equal((await client.call('POST', url, { uui_header: '' })).status, 'access-denied');
      await app.services.partners.setRights(partner.uuid, ['emergency']);
      assert.deepEqual(await emergency.emergencyDataOf(user.uuid), { uuiHeader: 'x', rescue: '0301120' });

      // Everything "" leaves no data; the data goes with the user.
      assert.equal((await client.call('POST', url, { uui_header: '', emergency_rescue: '' })).status, 'ok');
      assert.deepEqual(await client.call('GET', url), { status: 'ok' });
      assert.equal(await emergency.emergencyDataOf(user.uuid), undefined);
      assert.equal((await client.call('POST', url, { emergency_police: '110' })).status, 'ok');
      await app.services.users.deleteUser(user.uuid);
      assert.equal(await emergency.emergencyDataOf(user.uuid), undefined);
      assert.equal((await client.call('GET', url)).status, 'wrong-user');

      const { client: plain } = await loggedInClient(app);
      assert.equal((await plain.call('GET', url)).status, 'no-auth');
    });
  });
}
