import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEVICE_KEY, FirmwareClient, waitEvent } from '../../../test/devices.js';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkUsers } from '../../../test/object-store.js';

for (const dialect of DIALECTS) {
  describe(`box (${dialect})`, () => {
    test('a device given to a user is a box; online while it holds a session; events to readers', async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const device = await app.services.devices.createDevice({ key: DEVICE_KEY, description: 'hall' });
      assert.deepEqual((await owner.call('GET', '/api/box')).box, {});
      await app.services.devices.setOwner(device.uuid, user.uuid);
      const listed = (await owner.call('GET', '/api/box')).box as Record<string, Record<string, unknown>>;
      assert.deepEqual(Object.keys(listed), [device.uuid]);
      assert.equal(listed[device.uuid]?.online, false);
      assert.equal(listed[device.uuid]?.description, 'hall');
      assert.equal(listed[device.uuid]?.owner, user.uuid);

      // Shared read-only with a linked user, who then gets the box events too.
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      assert.equal(
        (await owner.call('POST', `/api/object/${device.uuid}/tag`, { add: [tags.share_read] })).status,
        'ok',
      );

      const firmware = await FirmwareClient.connect(app, device.uuid, { sw_version: 'sw2' });
      const online = await waitEvent(owner, 'box_online');
      assert.equal(online.box, device.uuid);
      assert.equal(online.sw_version, 'sw2');
      assert.equal((await waitEvent(reader, 'box_online')).box, device.uuid);
      const box = (await reader.call('GET', `/api/box/${device.uuid}`)).box as Record<string, unknown>;
      assert.equal(box.online, true);
      assert.equal(box.mac_addr, '00:11:22:aa:bb:cc');
      assert.equal(box.hw_version, 'hw1');

      // A new session replaces the old one: offline, then online again.
      const again = await FirmwareClient.connect(app, device.uuid);
      assert.equal((await waitEvent(owner, 'box_offline')).box, device.uuid);
      await waitEvent(owner, 'box_online');
      assert.equal((await firmware.call('GET', '/api/device/task')).status, 'no-session');
      assert.equal((await again.call('DELETE', '/api/device/session')).status, 'ok');
      assert.equal((await waitEvent(owner, 'box_offline')).box, device.uuid);
      assert.equal(
        ((await owner.call('GET', `/api/box/${device.uuid}`)).box as { online: boolean }).online,
        false,
      );

      // The reader may not change or release it.
      assert.equal(
        (await reader.call('POST', `/api/box/${device.uuid}`, { description: 'x' })).status,
        'access-denied',
      );
      assert.equal((await reader.call('DELETE', `/api/box/${device.uuid}`)).status, 'access-denied');
      assert.equal(
        (await owner.call('POST', `/api/box/${device.uuid}`, { description: 'kitchen' })).status,
        'ok',
      );
      assert.equal(
        ((await owner.call('GET', `/api/box/${device.uuid}`)).box as { description: string }).description,
        'kitchen',
      );
      assert.equal(
        (await owner.call('POST', `/api/box/${device.uuid}`, { description: 'x'.repeat(201) })).status,
        'wrong-syntax',
      );

      // Releasing it: the device loses its owner, the box is gone.
      assert.equal((await owner.call('DELETE', `/api/box/${device.uuid}`)).status, 'ok');
      assert.equal((await app.services.devices.findDevice(device.uuid))?.owner, null);
      assert.equal((await owner.call('GET', `/api/box/${device.uuid}`)).status, 'wrong-box');
      assert.deepEqual((await owner.call('GET', '/api/box')).box, {});
    });

    test('reload: the box gets the reload task and its answer is returned; box-offline; force', async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const device = await app.services.devices.createDevice({ key: DEVICE_KEY, owner: user.uuid });
      assert.equal(
        (await owner.call('POST', `/api/box/${device.uuid}`, { reload: true })).status,
        'box-offline',
      );
      const firmware = await FirmwareClient.connect(app, device.uuid);
      const call = owner.call('POST', `/api/box/${device.uuid}`, { reload: true });
      const task = await firmware.task();
      assert.equal(task.task, 'reload');
      assert.equal(task.force, false);
      await firmware.answer(task.id, { status: 'fail', message: 'busy' });
      assert.deepEqual((await call).reload, { status: 'fail', message: 'busy' });

      const forced = owner.call('POST', `/api/box/${device.uuid}`, { reload: true, force: true });
      const reboot = await firmware.task();
      assert.equal(reboot.force, true);
      assert.deepEqual((await forced).reload, {});
      assert.equal((await firmware.answer(reboot.id, { status: 'ok' })).status, 'wrong-task');
    });

    test('the box follows the device: operator reassignment and deletion', async (t) => {
      const app = await build(t, { dialect });
      const { client: alice, user: aliceUser } = await loggedInClient(app);
      const { client: bob, user: bobUser } = await loggedInClient(app);
      const device = await app.services.devices.createDevice({ key: DEVICE_KEY, owner: aliceUser.uuid });
      await app.services.devices.setOwner(device.uuid, bobUser.uuid);
      assert.equal((await alice.call('GET', `/api/box/${device.uuid}`)).status, 'wrong-box');
      assert.equal((await bob.call('GET', `/api/box/${device.uuid}`)).status, 'ok');
      const firmware = await FirmwareClient.connect(app, device.uuid);
      await app.services.devices.deleteDevice(device.uuid);
      assert.equal((await bob.call('GET', `/api/box/${device.uuid}`)).status, 'wrong-box');
      assert.equal((await firmware.call('GET', '/api/device/task')).status, 'no-session');
    });
  });
}
