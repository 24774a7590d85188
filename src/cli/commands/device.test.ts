/**
 * `zentrale-admin device set-license` and `assign`/`unassign` with boxes, run in this process
 * through `runAdmin` over the database of an app built with the same environment.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cliFor } from '../../../test/cli.js';
import { DIALECTS, testEnv } from '../../../test/helper.js';
import { buildApp } from '../../app.js';
import { loadConfig } from '../../platform/config.js';

for (const dialect of DIALECTS) {
  describe(`operator CLI: device (${dialect})`, () => {
    test('set-license stores or clears the license; assign and unassign make and remove the box', async (t) => {
      const env = await testEnv(t, dialect);
      const app = await buildApp(loadConfig(env));
      t.after(() => app.close());
      const user = await app.services.users.createUser({
        username: 'licensee',
        password: 'secret-pw',
        firstname: 'L',
        lastname: 'E',
      });
      const device = await app.services.devices.createDevice({ key: 'device-key' });
      const cli = cliFor(env);
      const set = await cli.json('device', 'set-license', device.uuid, '--license', 'LIC-42');
      assert.equal(set.license, 'LIC-42');
      assert.equal((await app.services.devices.findDevice(device.uuid))?.license, 'LIC-42');
      await cli.fails(2, /either --license or --clear/, 'device', 'set-license', device.uuid);
      assert.equal((await cli.json('device', 'set-license', device.uuid, '--clear')).license, null);

      await cli.json('device', 'assign', device.uuid, '--owner', 'licensee');
      const box = await app.services.boxes.getBox(user.uuid, device.uuid);
      assert.equal(box.online, false);
      await cli.json('device', 'unassign', device.uuid);
      await assert.rejects(app.services.boxes.getBox(user.uuid, device.uuid), /unknown object/);
    });

    test("csp-unknown shows the device's packets of protocols the server does not read", async (t) => {
      const env = await testEnv(t, dialect);
      const app = await buildApp(loadConfig(env));
      t.after(() => app.close());
      const device = await app.services.devices.createDevice({ key: 'device-key' });
      const cli = cliFor(env);
      assert.deepEqual(await cli.json('device', 'csp-unknown', device.uuid), []);
      const packet = Buffer.from([9, 0, 0, 0, 1, 0, 0xee]).toString('base64');
      await app.services.sensors.receivePacket(device.uuid, { packet, time: 1, rssi: -1, lqi: 1 });
      const [row] = await cli.json('device', 'csp-unknown', device.uuid);
      assert.deepEqual(
        { ...row, first_heard: 0, last_heard: 0 },
        {
          proto_type: 9,
          packets: 1,
          first_heard: 0,
          last_heard: 0,
          last_packet: packet,
        },
      );
      const other = '00000000-0000-1000-8000-000000000000';
      await cli.fails(1, /wrong-device/, 'device', 'csp-unknown', other);
    });
  });
}
