import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildUser, DIALECTS } from '../../../test/helper.js';
import { ApiError } from '../../platform/errors.js';

const rejectsWith = (promise: Promise<unknown>, status: string) =>
  assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.status === status);

for (const dialect of DIALECTS) {
  describe(`feature packs (${dialect})`, () => {
    test('a new user gets the default pack: 5 SIP, 100 MB, 50 fax pages, 2 calls, dialplan_enable', async (t) => {
      const app = await build(t, { dialect });
      const user = await buildUser(app);
      assert.deepEqual(await app.services.features.packsOf(user.uuid), ['default']);
      assert.deepEqual(await app.services.features.quotaOf(user.uuid), {
        pack: ['default'],
        quota: { sip: 5, volume: 100, fax: 50, calls: 2 },
        feature: {
          fax_noad: false,
          call_unrestricted: false,
          box_enable: false,
          dialplan_enable: true,
          control_phone: false,
        },
      });
    });

    test('quotaOf sums the quotas and ORs the flags over all packs a user holds', async (t) => {
      const app = await build(t, { dialect });
      const { features } = app.services;
      const user = await buildUser(app);
      await features.createPack('fax', { quota: { fax: 200, volume: 50 }, feature: { fax_noad: true } });
      await features.createPack('phone', {
        quota: { sip: 3, calls: 8 },
        feature: { dialplan_enable: false },
      });
      assert.equal(await features.assignPack(user.uuid, 'fax'), true);
      assert.equal(await features.assignPack(user.uuid, 'fax'), false, 'a pack is held once');
      await features.assignPack(user.uuid, 'phone');
      const quota = await features.quotaOf(user.uuid);
      assert.deepEqual(quota.pack, ['default', 'fax', 'phone']);
      assert.deepEqual(quota.quota, { sip: 8, volume: 150, fax: 250, calls: 10 });
      assert.equal(quota.feature.fax_noad, true);
      assert.equal(quota.feature.dialplan_enable, true, 'on in one pack is on');
      assert.equal(quota.feature.box_enable, false);

      await features.unassignPack(user.uuid, 'default');
      assert.deepEqual((await features.quotaOf(user.uuid)).quota, { sip: 3, volume: 50, fax: 200, calls: 8 });
      assert.equal((await features.quotaOf(user.uuid)).feature.dialplan_enable, false);
      await rejectsWith(features.unassignPack(user.uuid, 'default'), 'wrong-pack');
    });

    test('a user without packs has zero quotas and no features', async (t) => {
      const app = await build(t, { dialect });
      const user = await buildUser(app);
      await app.services.features.unassignPack(user.uuid, 'default');
      const quota = await app.services.features.quotaOf(user.uuid);
      assert.deepEqual(quota.pack, []);
      assert.deepEqual(quota.quota, { sip: 0, volume: 0, fax: 0, calls: 0 });
      assert.ok(Object.values(quota.feature).every((on) => on === false));
    });

    test('every pack marked default goes to new users; unmarked packs do not', async (t) => {
      const app = await build(t, { dialect });
      const { features } = app.services;
      await features.createPack('extra', { quota: { sip: 1 }, isDefault: true });
      await features.createPack('other', { quota: { sip: 2 } });
      assert.deepEqual(await features.packsOf((await buildUser(app)).uuid), ['default', 'extra']);
      await features.updatePack('default', { isDefault: false });
      await features.updatePack('other', { isDefault: true });
      assert.deepEqual(await features.packsOf((await buildUser(app)).uuid), ['extra', 'other']);
    });

    test('updatePack changes only what is given; the default pack can be changed', async (t) => {
      const app = await build(t, { dialect });
      const { features } = app.services;
      const updated = await features.updatePack('default', {
        quota: { sip: 7 },
        feature: { box_enable: true },
      });
      assert.deepEqual(updated.quota, { sip: 7, volume: 100, fax: 50, calls: 2 });
      assert.equal(updated.feature.box_enable, true);
      assert.equal(updated.feature.dialplan_enable, true);
      assert.equal(updated.default, true);
      const user = await buildUser(app);
      assert.equal((await features.quotaOf(user.uuid)).quota.sip, 7);
      await rejectsWith(features.updatePack('nope', { quota: { sip: 1 } }), 'wrong-pack');
    });

    test('createPack: quotas left out are 0, already-exist, wrong-syntax for bad names and quotas', async (t) => {
      const app = await build(t, { dialect });
      const { features } = app.services;
      const pack = await features.createPack('basic');
      assert.deepEqual(pack.quota, { sip: 0, volume: 0, fax: 0, calls: 0 });
      assert.equal(pack.default, false);
      await rejectsWith(features.createPack('basic'), 'already-exist');
      await rejectsWith(features.createPack('bad name'), 'wrong-syntax');
      await rejectsWith(features.createPack('neg', { quota: { sip: -1 } }), 'wrong-syntax');
      await rejectsWith(features.createPack('frac', { quota: { fax: 1.5 } }), 'wrong-syntax');
      assert.deepEqual(
        (await features.listPacks()).map((p) => p.name),
        ['basic', 'default'],
      );
    });

    test('deletePack: not-empty while held, --force takes it from its users; list counts holders', async (t) => {
      const app = await build(t, { dialect });
      const { features } = app.services;
      const user = await buildUser(app);
      await features.createPack('gone', { quota: { sip: 1 } });
      await features.assignPack(user.uuid, 'gone');
      assert.equal((await features.listPacks()).find((p) => p.name === 'gone')?.users, 1);
      await rejectsWith(features.deletePack('gone'), 'not-empty');
      await features.deletePack('gone', { force: true });
      assert.deepEqual(await features.packsOf(user.uuid), ['default']);
      assert.equal(await features.findPack('gone'), undefined);
      await rejectsWith(features.deletePack('gone'), 'wrong-pack');
      await features.createPack('unused');
      await features.deletePack('unused');
    });

    test('assignPack: wrong-user, wrong-pack', async (t) => {
      const app = await build(t, { dialect });
      const { features } = app.services;
      const user = await buildUser(app);
      await rejectsWith(features.assignPack(user.uuid, 'nope'), 'wrong-pack');
      await rejectsWith(features.assignPack('00000000-0000-1000-8000-000000000000', 'default'), 'wrong-user');
    });
  });
}
