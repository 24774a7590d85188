/**
 * Sensors (spec "Other resources", sensors; Device API csp) as an attacker sees them: another
 * user's sensor is wrong-sensor on every route, stays as it was and no task reaches its box;
 * a box only feeds its owner; another partner reaches none of a partner's sensors; rules cannot
 * name a stranger's sensor; nothing of the victim shows in the attacker's lists or events;
 * without a login (or with the wrong kind of session) every route is no-auth; bad input changes
 * nothing; an owner keeps at most MAX_SENSORS sensors.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { waitEvent } from '../../../test/devices.js';
import { build, DIALECTS } from '../../../test/helper.js';
import {
  csp,
  expectLockedOut,
  expectStatus,
  HUGE,
  NOBODY,
  ownerWithBox,
  type Probe,
  packet,
  partnerClient,
  seesNothingOf,
  unchangedBy,
} from '../../../test/security-telephony.js';
import { MAX_SENSORS } from './sensor.schema.js';

const SWITCH = 0x04;

for (const dialect of DIALECTS) {
  describe(`sensors as an attacker sees them (${dialect})`, () => {
    test('another user, another partner, no login, bad input: the statuses; the sensor is unchanged and gets no task', async (t) => {
      const app = await build(t, { dialect });
      const { partner } = await partnerClient(app, ['sensor']);
      const { client: otherPartner } = await partnerClient(app, ['sensor']);
      const { client, user, firmware } = await ownerWithBox(app, { partnerUuid: partner.uuid });
      const stranger = await ownerWithBox(app);
      await csp(firmware, packet('12345678', 1, [[SWITCH, [1]]]));
      const sensor = (await waitEvent(client, 'sensor_data')).sensor as string;
      await expectStatus(client, [['POST', `/api/sensor/${sensor}`, { description: 'secret sensor' }]], 'ok');
      const s = stranger.client;
      const read = async () => [
        await client.call('GET', `/api/sensor/${sensor}`),
        await client.call('GET', `/api/sensor/${sensor}/data`),
        await client.call('GET', '/api/sensor'),
      ];
      const routes: Probe[] = [
        ['GET', `/api/sensor/${sensor}`],
        ['GET', `/api/sensor/${sensor}/data`],
        ['POST', `/api/sensor/${sensor}`, { description: 'mine' }],
        ['POST', `/api/sensor/${sensor}/action`, { switch: false }],
        ['DELETE', `/api/sensor/${sensor}`],
        ['DELETE', `/api/sensor/${sensor}?purge`],
      ];
      const partnerRoutes: Probe[] = [
        ['GET', `/api/partner/sensor/${user.uuid}`],
        ['GET', `/api/partner/sensor/${user.uuid}/${sensor}`],
        ['GET', `/api/partner/sensor/${user.uuid}/${sensor}/data`],
      ];
      const rule = (type: string) => ({
        name: 'r',
        initial_state: 'a',
        edges: [
          {
            from: 'a',
            to: 'b',
            conditions: [{ type: 'sensor_data', sensor, value: [true] }],
            actions: type === 'action' ? [{ type: 'sensor_action', sensor, value: [false] }] : [],
          },
        ],
      });
      await unchangedBy(read, async () => {
        await expectStatus(s, routes, 'wrong-sensor');
        await expectStatus(
          s,
          [
            ['POST', '/api/rule', rule('condition')],
            ['POST', '/api/rule', rule('action')],
          ],
          'wrong-sensor',
        );
        await expectStatus(otherPartner, partnerRoutes, 'wrong-user');
        await expectLockedOut(app, [...routes, ['GET', '/api/sensor']], otherPartner);
        await expectLockedOut(app, partnerRoutes, client);
        // The device route wants a device session; a user's is the wrong kind.
        await expectLockedOut(
          app,
          [
            [
              'POST',
              '/api/device/csp',
              { packet: packet('12345678', 9, [[SWITCH, [0]]]), time: 1, rssi: -1, lqi: 1 },
            ],
          ],
          client,
        );
        await expectStatus(
          client,
          [
            ['GET', '/api/sensor/not-a-uuid'],
            ['POST', `/api/sensor/${sensor}`, { description: 'x'.repeat(201) }],
            ['POST', `/api/sensor/${sensor}/action`, { level: 101 }],
            ['POST', `/api/sensor/${sensor}/action`, { switch: 'on' }],
          ],
          'wrong-syntax',
        );
        await expectStatus(client, [['POST', `/api/sensor/${sensor}`, { description: HUGE }]], 'too-large');
        await expectStatus(client, [['GET', `/api/sensor/${NOBODY}`]], 'wrong-sensor');
        await expectStatus(
          firmware,
          [['POST', '/api/device/csp', { packet: 'x', time: 1, rssi: -1, lqi: 1 }]],
          'wrong-syntax',
        );
      });
      // No task reached the owner's box.
      assert.equal((await firmware.call('POST', '/api/device/task/0', {})).status, 'wrong-task');
      await seesNothingOf(s, ['/api/sensor'], [sensor, 'secret sensor']);

      // The stranger's box hears the same sensor: a separate sensor of the stranger.
      await csp(stranger.firmware, packet('12345678', 2, [[SWITCH, [0]]]));
      const theirs = (await waitEvent(s, 'sensor_data')).sensor as string;
      assert.notEqual(theirs, sensor);
      assert.equal((await app.services.sensors.lastReading(sensor))?.value.switch, true);
    });

    test(`an owner keeps at most ${MAX_SENSORS} sensors: packets of a further address are exceeded-limit and store nothing`, async (t) => {
      const app = await build(t, { dialect });
      const { user, firmware } = await ownerWithBox(app);
      const address = (i: number) => (0x10000000 + i).toString(16);
      for (let i = 0; i < MAX_SENSORS; i++)
        assert.equal((await csp(firmware, packet(address(i), 1, [[SWITCH, [1]]]))).status, 'ok');
      const count = async () =>
        (
          await app.database.db
            .selectFrom('sensor_address')
            .select('sensor_uuid')
            .where('owner_uuid', '=', user.uuid)
            .execute()
        ).length;
      assert.equal(await count(), MAX_SENSORS);
      assert.equal(
        (await csp(firmware, packet(address(MAX_SENSORS), 1, [[SWITCH, [1]]]))).status,
        'exceeded-limit',
      );
      assert.equal(await count(), MAX_SENSORS);
      // A known sensor still reports.
      assert.equal((await csp(firmware, packet(address(0), 2, [[SWITCH, [0]]]))).status, 'ok');
    });
  });
}
