/**
 * The Device API (spec "Device API") as an attacker sees it: another device cannot take or
 * answer a device's tasks, a failed login with a device's UUID does not end its session, and a
 * user's or partner's session or no login reaches no device route; bad input changes nothing.
 * A device keeps one connection record and the answers of its own tasks only; its sensor
 * packets are bounded in the sensor area (MAX_SENSORS, MAX_READINGS).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEVICE_KEY, deviceLogin, FirmwareClient } from '../../../test/devices.js';
import { build, Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { expectLockedOut, expectStatus, HUGE, partnerClient } from '../../../test/security-telephony.js';

for (const dialect of DIALECTS) {
  describe(`device API as an attacker sees it (${dialect})`, () => {
    test("another device cannot answer a device's task; a wrong login keeps the session; other sessions are no-auth", async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const device = await app.services.devices.createDevice({ key: DEVICE_KEY, owner: user.uuid });
      const intruder = await app.services.devices.createDevice({ key: DEVICE_KEY });
      const firmware = await FirmwareClient.connect(app, device.uuid);
      const other = await FirmwareClient.connect(app, intruder.uuid);
      const connection = await app.services.deviceProtocol.connection(device.uuid);

      // Someone who knows the device UUID but not its key: wrong-auth, the session stays.
      // POST /api/device/session is called without a session.
      const anonymous = new Client(app);
      await expectStatus(
        anonymous,
        [
          ['POST', '/api/device/session', deviceLogin(device.uuid, { key: 'guessed-key' })],
          [
            'POST',
            '/api/device/session',
            deviceLogin(device.uuid, { key: `${DEVICE_KEY}x`, ip_addr: '198.51.100.1' }),
          ],
        ],
        'wrong-auth',
      );
      assert.deepEqual(await app.services.deviceProtocol.connection(device.uuid), connection);

      const reload = owner.call('POST', `/api/box/${device.uuid}`, { reload: true });
      const task = await firmware.task();
      assert.equal(task.task, 'reload');
      // The intruder's task ids are its own: it has no task of that id to answer.
      await expectStatus(
        other,
        [['POST', `/api/device/task/${task.id}`, { status: 'fail', message: 'hijacked' }]],
        'wrong-task',
      );
      await firmware.answer(task.id, { status: 'fail', message: 'busy' });
      // The owner gets the box's own answer, not the intruder's.
      assert.deepEqual((await reload).reload, { status: 'fail', message: 'busy' });

      const { client: partner } = await partnerClient(app, ['sensor']);
      await expectLockedOut(
        app,
        [
          ['GET', '/api/device/task'],
          ['POST', '/api/device/task/0', { status: 'ok' }],
          ['DELETE', '/api/device/session'],
        ],
        owner,
        partner,
      );
      await expectStatus(
        firmware,
        [
          ['GET', '/api/device/task?next=-1'],
          ['GET', '/api/device/task?next=x'],
          ['POST', '/api/device/task/x', { status: 'ok' }],
        ],
        'wrong-syntax',
      );
      await expectStatus(firmware, [['POST', '/api/device/task/0', { message: HUGE }]], 'too-large');
      await expectStatus(
        anonymous,
        [['POST', '/api/device/session', deviceLogin(device.uuid, { sw_version: HUGE })]],
        'too-large',
      );
      // Through all of it the device's own session held (a session that ended would be no-session).
      await expectStatus(firmware, [['POST', '/api/device/task/999', { status: 'ok' }]], 'wrong-task');
    });
  });
}
