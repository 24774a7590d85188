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
  });
}
