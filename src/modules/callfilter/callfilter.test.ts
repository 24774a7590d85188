import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildUser, DIALECTS } from '../../../test/helper.js';
import { partnerClient } from '../../../test/security-telephony.js';
import { newUuid } from '../../platform/ids.js';
import { decideCallFilter } from '../../telephony/decisions/callfilter.js';

const FILTER = [
  { type: 'replace', key: '^0', value: '+49' },
  [
    { type: 'service', key: 'fax', pass: false },
    { type: 'match', key: '^\\+49', break: true },
    { type: 'match', key: '^\\+', pass: false },
  ],
  { type: 'match', key: '^\\+49900', pass: false },
];

for (const dialect of DIALECTS) {
  describe(`partner call filters (${dialect})`, () => {
    test('set, get, simulate, replace, delete; callFilterOf; every status', async (t) => {
      const app = await build(t, { dialect });
      const { client, partner } = await partnerClient(app, ['callfilter']);
      const { client: other } = await partnerClient(app, ['callfilter']);
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      const url = `/api/partner/callfilter/${user.uuid}`;

      assert.equal((await client.call('GET', url)).status, 'empty-filter');
      assert.equal(await app.services.callFilters.callFilterOf(user.uuid), null);
      assert.deepEqual(
        await client.call('POST', `${url}/simulate`, { destination: '+1555', service: 'sip' }),
        {
          status: 'ok',
          allowed: true,
          destination: '+1555',
          decided_by: null,
          trace: [],
        },
      );
      assert.equal((await client.call('POST', url, { callfilter: FILTER })).status, 'ok');
      assert.deepEqual(await client.call('GET', url), { status: 'ok', callfilter: FILTER });

      const simulate = (destination: string, service = 'sip') =>
        client.call('POST', `${url}/simulate`, { destination, service });
      const national = await simulate('030123');
      assert.equal(national.allowed, true);
      assert.equal(national.destination, '+4930123');
      assert.deepEqual(national.trace, [
        { operator: 'callfilter.0', destination: '+4930123' },
        { operator: 'callfilter.1.0', held: false },
        { operator: 'callfilter.1.1', held: true, effect: 'break' },
        { operator: 'callfilter.2', held: false },
      ]);
      assert.deepEqual(
        [(await simulate('0900123')).allowed, (await simulate('0900123')).decided_by],
        [false, 'callfilter.2'],
      );
      assert.equal((await simulate('+1555')).allowed, false);
      assert.equal((await simulate('030123', 'fax')).allowed, false);
      // A filter given in the body is simulated instead of the stored one.
      const given = await client.call('POST', `${url}/simulate`, {
        callfilter: [{ type: 'service', key: 'fax', pass: true, reverse: true }],
        destination: '+1555',
        service: 'sip',
      });
      assert.deepEqual([given.allowed, given.decided_by], [true, 'callfilter.0']);

      // The call engine's view agrees with the simulator.
      const compiled = await app.services.callFilters.callFilterOf(user.uuid);
      assert.ok(compiled);
      assert.equal(decideCallFilter(compiled, '+1555', 'sip').allowed, false);
      assert.equal(decideCallFilter(compiled, '030', 'callback').allowed, true);

      const many = Array.from({ length: 251 }, () => ({ type: 'service', key: 'fax', pass: false }));
      for (const [c, method, path, body, status] of [
        [client, 'POST', url, { callfilter: many }, 'too-large'],
        [
          client,
          'POST',
          `${url}/simulate`,
          { callfilter: many, destination: '1', service: 'sip' },
          'too-large',
        ],
        [client, 'POST', url, { callfilter: [] }, 'missing-element'],
        [client, 'POST', url, {}, 'missing-element'],
        [client, 'POST', url, { callfilter: [{ type: 'match', key: '(', pass: true }] }, 'wrong-syntax'],
        [
          client,
          'POST',
          url,
          { callfilter: [{ type: 'replace', key: 'a', value: 'b', pass: true }] },
          'wrong-syntax',
        ],
        [client, 'POST', `${url}/simulate`, { destination: '1', service: 'telex' }, 'wrong-syntax'],
        [client, 'POST', `${url}/simulate`, { service: 'sip' }, 'missing-element'],
        [other, 'POST', url, { callfilter: FILTER }, 'wrong-user'],
        [other, 'GET', url, undefined, 'wrong-user'],
        [other, 'DELETE', url, undefined, 'wrong-user'],
        [other, 'POST', `${url}/simulate`, { destination: '1', service: 'sip' }, 'wrong-user'],
        [client, 'GET', `/api/partner/callfilter/${newUuid()}`, undefined, 'wrong-user'],
        [client, 'POST', '/api/partner/callfilter/nope', { callfilter: FILTER }, 'wrong-syntax'],
      ] as const) {
        assert.equal(
          (await c.call(method, path, body)).status,
          status,
          `${method} ${path} ${JSON.stringify(body)}`,
        );
      }
      // 250 operators are accepted; the failed calls left the filter as it was.
      assert.deepEqual((await client.call('GET', url)).callfilter, FILTER);
      assert.equal((await client.call('POST', url, { callfilter: many.slice(1) })).status, 'ok');
      assert.equal(((await client.call('GET', url)).callfilter as unknown[]).length, 250);

      await app.services.partners.setRights(partner.uuid, ['phone']);
      for (const [method, body] of [
        ['GET', undefined],
        ['POST', { callfilter: FILTER }],
        ['DELETE', undefined],
      ] as const)
        assert.equal((await client.call(method, url, body)).status, 'access-denied', method);
      await app.services.partners.setRights(partner.uuid, ['callfilter']);

      assert.equal((await client.call('DELETE', url)).status, 'ok');
      assert.equal((await client.call('GET', url)).status, 'empty-filter');
      assert.equal((await client.call('DELETE', url)).status, 'ok');

      // The filter goes with the user.
      assert.equal((await client.call('POST', url, { callfilter: FILTER })).status, 'ok');
      await app.services.users.deleteUser(user.uuid);
      assert.equal(await app.services.callFilters.callFilterOf(user.uuid), null);
    });
  });
}
