/**
 * Boxes (devices given to a user) as an attacker with a session of their own sees them: another
 * user's box is wrong-box on every route, stays as it was and gets no task; nothing of it shows in
 * the attacker's list or events; without a login every route is no-auth; bad input changes
 * nothing. A client cannot make boxes (the operator assigns devices), so the only thing it keeps
 * here is the bounded description.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEVICE_KEY, FirmwareClient } from '../../../test/devices.js';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import {
  expectLockedOut,
  expectStatus,
  HUGE,
  NOBODY,
  type Probe,
  seesNothingOf,
  unchangedBy,
} from '../../../test/security-telephony.js';

for (const dialect of DIALECTS) {
  describe(`box as an attacker sees it (${dialect})`, () => {
    test("another user, no login, bad input: the statuses; the owner's box is unchanged and gets no task", async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const device = await app.services.devices.createDevice({
        key: DEVICE_KEY,
        owner: user.uuid,
        description: 'secret box',
      });
      const firmware = await FirmwareClient.connect(app, device.uuid);
      const url = `/api/box/${device.uuid}`;
      const read = async () => [
        await client.call('GET', url),
        await client.call('GET', '/api/box'),
        (await app.services.devices.findDevice(device.uuid))?.owner,
      ];
      const routes: Probe[] = [
        ['GET', url],
        ['POST', url, { description: 'theirs', reload: true }],
        ['POST', url, { reload: true, force: true }],
        ['DELETE', url],
      ];
      await unchangedBy(read, async () => {
        await expectStatus(stranger, routes, 'wrong-box');
        const everyRoute: Probe[] = [...routes, ['GET', '/api/box']];
        await expectLockedOut(app, everyRoute);
        await expectStatus(
          client,
          [
            ['GET', '/api/box/not-a-uuid'],
            ['POST', '/api/box/not-a-uuid', {}],
            ['DELETE', '/api/box/not-a-uuid'],
            ['GET', '/api/box?count=0'],
            ['POST', url, { description: 'x'.repeat(201) }],
            ['POST', url, { reload: 'yes' }],
            ['POST', url, { description: 5 }],
          ],
          'wrong-syntax',
        );
        await expectStatus(client, [['POST', url, { description: HUGE }]], 'too-large');
        await expectStatus(client, [['GET', `/api/box/${NOBODY}`]], 'wrong-box');
      });
      // No task reached the device.
      assert.equal((await firmware.call('POST', '/api/device/task/0', {})).status, 'wrong-task');
      await seesNothingOf(stranger, ['/api/box'], [device.uuid, 'secret box']);
    });
  });
}
