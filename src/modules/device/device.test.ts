import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildUser, DIALECTS } from '../../../test/helper.js';
import { ApiError } from '../../platform/errors.js';
import { isUuidV1, newUuid } from '../../platform/ids.js';

const rejectsWith = (promise: Promise<unknown>, status: string) =>
  assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.status === status);

for (const dialect of DIALECTS) {
  describe(`devices (${dialect})`, () => {
    test('verifyDevice accepts the right key only; the key is stored as an argon2id hash', async (t) => {
      const app = await build(t, { dialect });
      const { devices } = app.services;
      const device = await devices.createDevice({ key: 'device-key-1', description: 'hall' });
      assert.ok(isUuidV1(device.uuid));
      assert.deepEqual(await devices.verifyDevice(device.uuid, 'device-key-1'), device);
      assert.equal(await devices.verifyDevice(device.uuid, 'device-key-2'), undefined);
      assert.equal(await devices.verifyDevice(newUuid(), 'device-key-1'), undefined);
      assert.equal(await devices.verifyDevice('not-a-uuid', 'device-key-1'), undefined);
      const row = await app.database.db.selectFrom('device').selectAll().executeTakeFirstOrThrow();
      assert.match(row.key_hash, /^\$argon2id\$/);

      await devices.setKey(device.uuid, 'device-key-2');
      assert.equal(await devices.verifyDevice(device.uuid, 'device-key-1'), undefined);
      assert.equal((await devices.verifyDevice(device.uuid, 'device-key-2'))?.uuid, device.uuid);
    });

    test('a given UUID is kept (lower case); already-exist; wrong-syntax for a non-v1 UUID or bad key', async (t) => {
      const app = await build(t, { dialect });
      const { devices } = app.services;
      const uuid = newUuid();
      assert.equal((await devices.createDevice({ uuid: uuid.toUpperCase(), key: 'device-key' })).uuid, uuid);
      await rejectsWith(devices.createDevice({ uuid, key: 'device-key' }), 'already-exist');
      await rejectsWith(
        devices.createDevice({ uuid: '6ba7b810-9dad-41d1-80b4-00c04fd430c8', key: 'device-key' }),
        'wrong-syntax',
      );
      await rejectsWith(devices.createDevice({ key: 'four' }), 'wrong-syntax');
      await rejectsWith(devices.setKey(uuid, 'x'.repeat(51)), 'wrong-syntax');
      assert.equal((await devices.listDevices()).length, 1);
    });

    test('owners: create with owner, assign, unassign, list by owner; wrong-user, wrong-device', async (t) => {
      const app = await build(t, { dialect });
      const { devices } = app.services;
      const alice = await buildUser(app);
      const bob = await buildUser(app);
      const a = await devices.createDevice({ key: 'device-key', owner: alice.uuid });
      const b = await devices.createDevice({ key: 'device-key' });
      assert.equal(a.owner, alice.uuid);
      assert.equal(b.owner, null);
      assert.equal((await devices.setOwner(b.uuid, bob.uuid)).owner, bob.uuid);
      assert.deepEqual(
        (await devices.listDevices(bob.uuid)).map((d) => d.uuid),
        [b.uuid],
      );
      assert.equal((await devices.setOwner(a.uuid, null)).owner, null);
      assert.deepEqual(await devices.listDevices(alice.uuid), []);
      await rejectsWith(devices.createDevice({ key: 'device-key', owner: newUuid() }), 'wrong-user');
      await rejectsWith(devices.setOwner(a.uuid, newUuid()), 'wrong-user');
      await rejectsWith(devices.setOwner(newUuid(), alice.uuid), 'wrong-device');
      await rejectsWith(devices.setKey(newUuid(), 'device-key'), 'wrong-device');

      await devices.deleteDevice(a.uuid);
      assert.equal(await devices.findDevice(a.uuid), undefined);
      await rejectsWith(devices.deleteDevice(a.uuid), 'wrong-device');
    });

    test('deleting a user leaves their devices without owner', async (t) => {
      const app = await build(t, { dialect });
      const alice = await buildUser(app);
      const device = await app.services.devices.createDevice({ key: 'device-key', owner: alice.uuid });
      await app.services.users.deleteUser(alice.uuid);
      assert.equal((await app.services.devices.findDevice(device.uuid))?.owner, null);
    });
  });
}
