import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { partnerClient } from '../../../test/security-telephony.js';

const URL = '/api/partner/enterprise';

for (const dialect of DIALECTS) {
  describe(`partner enterprise settings (${dialect})`, () => {
    test('defaults, partial changes, the prefix flag; wrong-syntax, access-denied; each partner its own', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app, ['enterprise']);
      const { client: other, partner: otherPartner } = await partnerClient(app, ['enterprise']);
      const defaults = { status: 'ok', enterprise: { description: '', group_prefix_enable: false } };
      assert.deepEqual(await client.call('GET', URL), defaults);
      assert.equal((await client.call('POST', URL, { description: 'Acme GmbH' })).status, 'ok');
      assert.equal((await client.call('POST', URL, { group_prefix_enable: true })).status, 'ok');
      assert.deepEqual(await client.call('GET', URL), {
        status: 'ok',
        enterprise: { description: 'Acme GmbH', group_prefix_enable: true },
      });
      assert.equal(await app.services.enterprises.groupPrefixEnabled(partner.uuid), true);
      assert.equal((await client.call('POST', URL, {})).status, 'ok');
      for (const [body, status] of [
        [{ description: 'x'.repeat(201) }, 'wrong-syntax'],
        [{ group_prefix_enable: 'yes' }, 'wrong-syntax'],
        [{ description: 'ok', group_prefix_enable: 1 }, 'wrong-syntax'],
      ] as const)
        assert.equal((await client.call('POST', URL, body)).status, status, JSON.stringify(body));
      assert.deepEqual((await client.call('GET', URL)).enterprise, {
        description: 'Acme GmbH',
        group_prefix_enable: true,
      });
      // The second partner sees and changes only its own settings.
      assert.deepEqual(await other.call('GET', URL), defaults);
      assert.equal(
        (await other.call('POST', URL, { group_prefix_enable: false, description: 'B' })).status,
        'ok',
      );
      assert.equal(await app.services.enterprises.groupPrefixEnabled(otherPartner.uuid), false);
      assert.deepEqual((await client.call('GET', URL)).enterprise, {
        description: 'Acme GmbH',
        group_prefix_enable: true,
      });
      assert.equal((await client.call('POST', URL, { group_prefix_enable: false })).status, 'ok');
      assert.equal(await app.services.enterprises.groupPrefixEnabled(partner.uuid), false);

      // Without the right `enterprise`: access-denied, nothing changes.
      await app.services.partners.setRights(partner.uuid, ['usergroup']);
      assert.equal((await client.call('GET', URL)).status, 'access-denied');
      assert.equal((await client.call('POST', URL, { group_prefix_enable: true })).status, 'access-denied');
      assert.equal(await app.services.enterprises.groupPrefixEnabled(partner.uuid), false);

      const { client: user } = await loggedInClient(app);
      assert.equal((await user.call('GET', URL)).status, 'no-auth');
      assert.equal((await new Client(app).call('POST', URL, {})).status, 'no-session');
    });
  });
}
