/**
 * Spec "Internal API": jeye, mwi, statistics and usage, each behind its permission, on both
 * databases (the routes without their permission: internal.security.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildPartner, buildUser, DIALECTS, loggedInClient } from '../../../test/helper.js';
import type { App } from '../../app.js';
import { newUuid } from '../../platform/ids.js';
import type { InternalPermission } from '../user/index.js';
import { JEYE_KEEP_PER_HOST } from './internal.schema.js';

async function holder(app: App, ...permissions: InternalPermission[]) {
  const { client, user } = await loggedInClient(app);
  for (const permission of permissions) await app.services.users.grantPermission(user.uuid, permission);
  return client;
}

for (const dialect of DIALECTS) {
  describe(`internal API (${dialect})`, () => {
    test('jeye: hosts post reports, paged by arrival; empty-data, too-large, bounds, access-denied', async (t) => {
      const app = await build(t, { dialect });
      const client = await holder(app, 'jeye');
      const uuids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const answer = await client.call('POST', '/api/jeye/mon1.example.org', {
          data: { load: i, ok: true },
        });
        assert.equal(answer.status, 'ok');
        uuids.push(answer.uuid as string);
      }
      await client.call('POST', '/api/jeye/10.0.0.7', { data: { load: 99 } });
      const page = (await client.call('GET', '/api/jeye/mon1.example.org')).jeye as Record<
        string,
        { load: number }
      >;
      assert.deepEqual(Object.keys(page), uuids.slice(0, 10));
      assert.deepEqual(page[uuids[3]!], { load: 3, ok: true });
      const desc = (await client.call('GET', '/api/jeye/mon1.example.org?order=desc&count=2')).jeye as object;
      assert.deepEqual(Object.keys(desc), [uuids[11], uuids[10]]);
      const after = (await client.call('GET', `/api/jeye/mon1.example.org?start=${uuids[9]}&count=5000`))
        .jeye;
      assert.deepEqual(Object.keys(after as object), uuids.slice(10));
      assert.deepEqual(
        Object.keys((await client.call('GET', '/api/jeye/10.0.0.7')).jeye as object).length,
        1,
      );
      for (const [url, status] of [
        ['/api/jeye/unknown.host', 'empty-data'],
        [`/api/jeye/mon1.example.org?start=${uuids[11]}`, 'empty-data'],
        ['/api/jeye/mon1.example.org?from=4102444800', 'empty-data'],
        ['/api/jeye/mon1.example.org?count=0', 'wrong-syntax'],
        ['/api/jeye/mon1.example.org?count=5001', 'wrong-syntax'],
        ['/api/jeye/-bad', 'wrong-syntax'],
        ['/api/jeye/mon1.example.org?start=nope', 'wrong-syntax'],
      ] as const) {
        assert.equal((await client.call('GET', url)).status, status, url);
      }
      for (const [body, status] of [
        [{}, 'missing-element'],
        [{ data: 5 }, 'wrong-syntax'],
        [{ data: [1] }, 'wrong-syntax'],
        [{ data: { blob: 'x'.repeat(70_000) } }, 'too-large'],
      ] as const) {
        assert.equal(
          (await client.call('POST', '/api/jeye/mon2', body)).status,
          status,
          JSON.stringify(body).slice(0, 40),
        );
      }
      assert.equal(
        (await client.call('GET', '/api/jeye/mon2')).status,
        'empty-data',
        'failed posts stored nothing',
      );
      // A host keeps its newest reports only.
      await app.services.writer.write(async ({ trx }) => {
        const rows = Array.from({ length: JEYE_KEEP_PER_HOST }, (_, i) => {
          const uuid = newUuid();
          return { uuid, sort_key: `0${i.toString().padStart(6, '0')}`, host: 'busy', time: 1, data: '{}' };
        });
        for (let i = 0; i < rows.length; i += 200)
          await trx
            .insertInto('jeye')
            .values(rows.slice(i, i + 200))
            .execute();
      });
      const newest = (await client.call('POST', '/api/jeye/busy', { data: { last: true } })).uuid as string;
      const kept = (await client.call('GET', '/api/jeye/busy?count=5000')).jeye as Record<string, unknown>;
      assert.equal(Object.keys(kept).length, JEYE_KEEP_PER_HOST);
      assert.deepEqual(kept[newest], { last: true });
    });

    test('mwi: GET, POST with phone-ok/phone-fail, DELETE; wrong-phone; access-denied', async (t) => {
      const app = await build(t, { dialect });
      const client = await holder(app, 'mwi');
      await app.services.phones.addNumber('+4930500');
      await app.services.phones.addNumber('+4930501');
      assert.deepEqual(await client.call('GET', '/api/mwi/+4930500'), { status: 'ok' });
      const answer = await client.call('POST', '/api/mwi', {
        '+4930500': 'sip:box500@mwi.example.org',
        '+4930501': 'sip:box501@10.0.0.2:5070',
        '+4930599': 'sip:nobody@mwi.example.org',
        '4930500': 'sip:x@y',
        '+4930502': 'http://mwi.example.org',
      });
      assert.deepEqual(answer, {
        status: 'ok',
        'phone-ok': ['+4930500', '+4930501'],
        'phone-fail': ['+4930502', '+4930599', '4930500'],
      });
      assert.deepEqual(await client.call('GET', '/api/mwi/+4930500'), {
        status: 'ok',
        mwi_uri: 'sip:box500@mwi.example.org',
      });
      await client.call('POST', '/api/mwi', { '+4930500': 'sip:new@mwi.example.org' });
      assert.equal((await client.call('GET', '/api/mwi/+4930500')).mwi_uri, 'sip:new@mwi.example.org');
      assert.deepEqual(await client.call('POST', '/api/mwi', {}), {
        status: 'ok',
        'phone-ok': [],
        'phone-fail': [],
      });
      assert.equal((await client.call('POST', '/api/mwi', { '+4930500': 5 })).status, 'wrong-syntax');
      const many = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`+49301${i}`, 'sip:a@b']));
      assert.equal((await client.call('POST', '/api/mwi', many)).status, 'wrong-syntax');
      assert.deepEqual(await client.call('DELETE', '/api/mwi/+4930500'), { status: 'ok' });
      assert.deepEqual(await client.call('GET', '/api/mwi/+4930500'), { status: 'ok' });
      for (const [method, url, status] of [
        ['DELETE', '/api/mwi/+4930500', 'wrong-phone'],
        ['DELETE', '/api/mwi/+4930599', 'wrong-phone'],
        ['GET', '/api/mwi/+4930599', 'wrong-phone'],
        ['GET', '/api/mwi/4930500', 'wrong-syntax'],
        ['DELETE', '/api/mwi/abc', 'wrong-syntax'],
      ] as const) {
        assert.equal((await client.call(method, url)).status, status, `${method} ${url}`);
      }
      assert.equal((await client.call('GET', '/api/mwi/+4930501')).mwi_uri, 'sip:box501@10.0.0.2:5070');
      assert.equal((await client.call('GET', '/api/mwi/+4930501')).mwi_uri, 'sip:box501@10.0.0.2:5070');
      assert.deepEqual(await client.call('GET', '/api/mwi/+4930500'), { status: 'ok' });
    });

    test('statistics by day and usage by month from CDRs, users and objects; empty-data; access-denied', async (t) => {
      const app = await build(t, { dialect });
      const client = await holder(app, 'statistics', 'usage');
      const partner = await buildPartner(app, 'acme');
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      const other = await buildUser(app, { partnerUuid: partner.uuid });
      const day = Date.UTC(2024, 4, 10);
      const { cdrs } = app.services;
      await cdrs.record({ date: day + 1000, service: 'call', owner: user.uuid, t_pre: 2000, t_post: 60_000 });
      await cdrs.record({ date: day + 5000, service: 'call', owner: other.uuid, t_post: 30_000 });
      await cdrs.record({
        date: day + 9000,
        service: 'fax',
        owner: user.uuid,
        page_count: 3,
        fax_id: newUuid(),
      });
      await cdrs.record({ date: day + 86_400_000, service: 'call', t_post: 1000 });
      await cdrs.record({ date: day - 1, service: 'call', t_post: 1000 });
      const stats = await client.call('GET', '/api/statistics/2024-05-10');
      assert.deepEqual(stats, {
        status: 'ok',
        result: {
          date: '2024-05-10',
          cdr: { count: 3, t_pre: 2000, t_post: 90_000, page_count: 3, service: { call: 2, fax: 1 } },
          users: { created: 0, total: 0 },
          objects: { created: {} },
        },
      });
      const usage = await client.call('GET', '/api/usage/2024-05');
      assert.deepEqual(usage.result, {
        month: '2024-05',
        cdr: { count: 5, t_pre: 2000, t_post: 92_000, page_count: 3, service: { call: 4, fax: 1 } },
        users: { created: 0, total: 0 },
        objects: { created: {} },
        partner: { acme: { count: 3, t_post: 90_000, users: 2 } },
      });
      // Today: the users and objects made by this test.
      const today = new Date().toISOString().slice(0, 10);
      const { client: owner } = await loggedInClient(app);
      type Today = {
        users: { created: number; total: number };
        objects: { created: Record<string, number> };
      };
      const before = (await client.call('GET', `/api/statistics/${today}`)).result as Today;
      const made = await owner.call('POST', '/api/contact', { firstname: 'Ada', lastname: 'L' });
      assert.equal(made.status, 'ok');
      const now = (await client.call('GET', `/api/statistics/${today}`)).result as Today;
      assert.equal(now.objects.created.contact, (before.objects.created.contact ?? 0) + 1);
      assert.ok(now.users.created >= 4 && now.users.total >= now.users.created);
      for (const [url, status] of [
        ['/api/statistics/2024-05-11', 'ok'],
        ['/api/statistics/2023-01-01', 'empty-data'],
        ['/api/usage/2023-01', 'empty-data'],
        ['/api/statistics/2024-02-30', 'wrong-syntax'],
        ['/api/statistics/2024-13-01', 'wrong-syntax'],
        ['/api/statistics/24-05-10', 'wrong-syntax'],
        ['/api/usage/2024-00', 'wrong-syntax'],
        ['/api/usage/2024-5', 'wrong-syntax'],
      ] as const) {
        assert.equal((await client.call('GET', url)).status, status, url);
      }
      const onlyStats = await holder(app, 'statistics');
      assert.equal((await onlyStats.call('GET', '/api/usage/2024-05')).status, 'access-denied');
    });
  });
}
