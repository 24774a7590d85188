import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { waitEvent } from '../../../test/devices.js';
import { build, buildPartner, buildUser, Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { csp, ownerWithBox, packet } from '../../../test/security-telephony.js';
import { decodePacket } from './index.js';

const TEMPERATURE = 0x01;
const BATTERY = 0x03;
const SWITCH = 0x04;

for (const dialect of DIALECTS) {
  describe(`sensor (${dialect})`, () => {
    test("a packet becomes a reading of the owner's sensor; values, history, duplicates; events", async (t) => {
      const app = await build(t, { dialect });
      const { user, client, firmware, device } = await ownerWithBox(app);
      // 21.5 °C, 3000 mV, switch on
      const first = packet('0a0b0c0d', 7, [
        [TEMPERATURE, [0x08, 0x66]],
        [BATTERY, [0x0b, 0xb8]],
        [SWITCH, [1]],
      ]);
      assert.equal((await csp(firmware, first)).status, 'ok');
      const event = await waitEvent(client, 'sensor_data');
      assert.deepEqual(event.value, { temperature: 21.5, battery: 3, switch: true });
      assert.equal(event.box, device.uuid);
      assert.equal(event.owner, user.uuid);
      const sensorUuid = event.sensor as string;

      // The same packet id again (a second box, a repeat) is one reading.
      assert.equal((await csp(firmware, first, { rssi: -90 })).status, 'ok');
      assert.equal((await csp(firmware, packet('0a0b0c0d', 8, [[TEMPERATURE, [0xff, 0x38]]]))).status, 'ok');

      const listed = (await client.call('GET', '/api/sensor')).sensor as Record<
        string,
        Record<string, unknown>
      >;
      assert.deepEqual(Object.keys(listed), [sensorUuid]);
      const sensor = listed[sensorUuid]!;
      assert.equal(sensor.address, '0a0b0c0d');
      assert.equal(sensor.proto_type, 1);
      assert.deepEqual(sensor.capability, ['temperature', 'battery', 'switch']);
      assert.deepEqual(sensor.value, { temperature: -2 });
      assert.equal(sensor.box, device.uuid);
      const data = (await client.call('GET', `/api/sensor/${sensorUuid}/data`)).data as {
        uuid: string;
        value: unknown;
        rssi: number;
      }[];
      assert.deepEqual(
        data.map((d) => d.value),
        [{ temperature: 21.5, battery: 3, switch: true }, { temperature: -2 }],
      );
      assert.equal(data[0]?.rssi, -61);
      const desc = (await client.call('GET', `/api/sensor/${sensorUuid}/data?order=desc&count=1`)).data as {
        uuid: string;
      }[];
      assert.deepEqual(
        desc.map((d) => d.uuid),
        [data[1]?.uuid],
      );
      assert.deepEqual(
        (
          (await client.call('GET', `/api/sensor/${sensorUuid}/data?start=${data[0]?.uuid}`)).data as {
            uuid: string;
          }[]
        ).map((d) => d.uuid),
        [data[1]?.uuid],
      );
      assert.equal(
        (await client.call('GET', `/api/sensor/${sensorUuid}/data?count=5001`)).status,
        'wrong-syntax',
      );
      assert.equal((await app.services.sensors.lastReading(sensorUuid))?.value.temperature, -2);

      assert.equal(
        (await client.call('POST', `/api/sensor/${sensorUuid}`, { description: 'hall' })).status,
        'ok',
      );
      assert.equal(
        ((await client.call('GET', `/api/sensor/${sensorUuid}`)).sensor as { description: string })
          .description,
        'hall',
      );

      // In the trash it takes no readings.
      assert.equal((await client.call('DELETE', `/api/sensor/${sensorUuid}`)).status, 'ok');
      await csp(firmware, packet('0a0b0c0d', 9, [[TEMPERATURE, [0, 1]]]));
      assert.equal((await app.services.sensors.lastReading(sensorUuid))?.value.temperature, -2);
      assert.equal((await client.call('DELETE', `/api/sensor/${sensorUuid}?purge`)).status, 'ok');
      assert.equal((await client.call('GET', `/api/sensor/${sensorUuid}`)).status, 'wrong-sensor');
    });

    test('bad packets are refused and store nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client, firmware, device } = await ownerWithBox(app);
      const header = [1, 0, 0, 0, 1, 0];
      const cases: [Record<string, unknown>, string][] = [
        [{ packet: undefined }, 'missing-element'],
        [{ rssi: undefined }, 'missing-element'],
        [{ packet: 'AAAA' }, 'wrong-syntax'],
        [{ packet: 'A'.repeat(501) }, 'wrong-syntax'],
        [{ packet: '!!!!!!!!!!!!' }, 'wrong-syntax'],
        [{ packet: 'AAAAAAAAA=A=' }, 'wrong-syntax'],
        [{ packet: Buffer.from([...header, 0x01, 0]).toString('base64') }, 'wrong-syntax'],
        [{ packet: Buffer.from([...header, SWITCH, 1, 0x01, 0]).toString('base64') }, 'wrong-syntax'],
        [{ packet: Buffer.from([...header, 0x01]).toString('base64') }, 'wrong-syntax'],
        [{ rssi: 51 }, 'wrong-syntax'],
        [{ lqi: 256 }, 'wrong-syntax'],
        [{ time: 'now' }, 'wrong-syntax'],
      ];
      const good = packet('00000001', 0, [[SWITCH, [0]]]);
      for (const [overrides, status] of cases) {
        const body = { packet: good, time: 1, rssi: -50, lqi: 10, ...overrides };
        assert.equal(
          (await firmware.call('POST', '/api/device/csp', body)).status,
          status,
          JSON.stringify(overrides),
        );
      }
      assert.deepEqual((await client.call('GET', '/api/sensor')).sensor, {});
      assert.deepEqual(await app.services.sensors.unknownPackets(device.uuid), [], 'none counted as unknown');
      assert.equal(
        (await client.call('POST', '/api/device/csp', { packet: good, time: 1, rssi: 1, lqi: 1 })).status,
        'no-auth',
      );
      // Below the route's 10 base64 characters: the decoder itself refuses a packet without a header.
      assert.equal(typeof decodePacket(Uint8Array.of(2, 0, 0, 0, 1)), 'string');
    });

    test('packets newer firmware sends (another protocol type, a new capability code) are taken and counted per device', async (t) => {
      const app = await build(t, { dialect });
      const { client, firmware, device } = await ownerWithBox(app);
      const raw = (bytes: number[]) => Buffer.from(bytes).toString('base64');
      const proto2 = raw([2, 0, 0, 0, 1, 0, 0xaa, 0xbb]);
      const proto2Again = raw([2, 0, 0, 0, 1, 1, 0xcc]);
      const newCapability = raw([1, 0, 0, 0, 1, 0, SWITCH, 1, 0x7f, 0, 0]);
      for (const body of [proto2, newCapability, proto2Again])
        assert.deepEqual(await csp(firmware, body), { status: 'ok' });
      const counted = await app.services.sensors.unknownPackets(device.uuid);
      assert.deepEqual(
        counted.map(({ proto_type, packets, last_packet }) => ({ proto_type, packets, last_packet })),
        [
          { proto_type: 1, packets: 1, last_packet: newCapability },
          { proto_type: 2, packets: 2, last_packet: proto2Again },
        ],
      );
      assert.ok(counted.every((row) => row.first_heard <= row.last_heard && row.first_heard > 0));
      // No reading, no sensor: nothing of them reaches the owner.
      assert.deepEqual((await client.call('GET', '/api/sensor')).sensor, {});
      assert.deepEqual((await client.call('GET', '/api/event?timeout=0')).event, []);

      // Bounded: one row per device and protocol type, whatever the box sends.
      for (let proto = 0; proto < 256; proto += 1)
        assert.equal((await csp(firmware, raw([proto, 1, 2, 3, 4, 5, 6, 7]))).status, 'ok', `type ${proto}`);
      const all = await app.services.sensors.unknownPackets(device.uuid);
      assert.equal(all.length, 256);
      assert.equal(all.find((row) => row.proto_type === 2)?.packets, 3);
      assert.equal(all.find((row) => row.proto_type === 1)?.packets, 1, 'a v1 packet it reads is a reading');
      assert.equal(Object.keys((await client.call('GET', '/api/sensor')).sensor as object).length, 1);

      // A device without owner counts too; deleting the device deletes its counts.
      const loose = await app.services.devices.createDevice({ key: 'loose-key' });
      await app.services.sensors.receivePacket(loose.uuid, { packet: proto2, time: 1, rssi: -1, lqi: 1 });
      assert.equal((await app.services.sensors.unknownPackets(loose.uuid))[0]?.packets, 1);
      await app.services.devices.deleteDevice(loose.uuid);
      assert.deepEqual(await app.services.sensors.unknownPackets(loose.uuid), []);
    });

    test('an action goes out as a csp task through the box; its answer is sensor_action', async (t) => {
      const app = await build(t, { dialect });
      const { client, firmware } = await ownerWithBox(app);
      await csp(firmware, packet('000000ff', 1, [[SWITCH, [0]]]));
      const sensorUuid = (await waitEvent(client, 'sensor_data')).sensor as string;
      assert.equal(
        (await client.call('POST', `/api/sensor/${sensorUuid}/action`, {})).status,
        'missing-element',
      );
      assert.equal(
        (await client.call('POST', `/api/sensor/${sensorUuid}/action`, { level: 50 })).status,
        'illegal-state',
      );
      assert.equal(
        (await client.call('POST', `/api/sensor/${sensorUuid}/action`, { level: 101 })).status,
        'wrong-syntax',
      );
      const answer = await client.call('POST', `/api/sensor/${sensorUuid}/action`, {
        switch: true,
        wait_timeout: 5,
      });
      assert.equal(answer.status, 'ok');
      const task = await firmware.task();
      assert.equal(task.task, 'csp');
      assert.equal(task.csp_proto_type, 1);
      assert.equal(task.csp_address, 255);
      assert.equal(task.csp_packet_id, 0);
      assert.equal(task.wait_recv, true);
      assert.equal(task.wait_timeout, 5);
      assert.deepEqual([...Buffer.from(task.csp_payload as string, 'base64')], [SWITCH, 1]);
      await firmware.answer(task.id, { status: 'ok', rssi: -40, lqi: 200 });
      const result = await waitEvent(client, 'sensor_action');
      assert.equal(result.action, answer.action);
      assert.equal(result.status, 'ok');
      assert.equal(result.rssi, -40);

      // Superseded while waiting: the box answers replaced.
      await client.call('POST', `/api/sensor/${sensorUuid}/action`, { switch: false });
      const second = await firmware.task();
      assert.equal(second.csp_packet_id, 1);
      await firmware.answer(second.id, { status: 'replaced' });
      assert.equal((await waitEvent(client, 'sensor_action')).status, 'replaced');

      // Box offline.
      await firmware.call('DELETE', '/api/device/session');
      assert.equal(
        (await client.call('POST', `/api/sensor/${sensorUuid}/action`, { switch: true })).status,
        'box-offline',
      );
    });

    test('partner sensor routes and partner_sensor_data / partner_sensor_action', async (t) => {
      const app = await build(t, { dialect });
      const partner = await buildPartner(app);
      const other = await buildPartner(app);
      const partnerClient = new Client(app);
      await partnerClient.open();
      assert.equal(
        (await partnerClient.call('POST', '/api/session', { partner: partner.name, key: partner.key }))
          .status,
        'ok',
      );
      const { user, client, firmware } = await ownerWithBox(app, { partnerUuid: partner.uuid });
      const { user: outsider } = await loggedInClient(app);
      const otherUser = await buildUser(app, { partnerUuid: other.uuid });

      await csp(firmware, packet('0000abcd', 3, [[SWITCH, [1]]]));
      const data = await waitEvent(partnerClient, 'partner_sensor_data');
      assert.equal(data.user, user.uuid);
      assert.deepEqual(data.value, { switch: true });
      const sensorUuid = data.sensor as string;

      const listed = (await partnerClient.call('GET', `/api/partner/sensor/${user.uuid}`)).sensor as Record<
        string,
        unknown
      >;
      assert.deepEqual(Object.keys(listed), [sensorUuid]);
      assert.equal(
        (await partnerClient.call('GET', `/api/partner/sensor/${user.uuid}/${sensorUuid}`)).status,
        'ok',
      );
      assert.equal(
        (
          (await partnerClient.call('GET', `/api/partner/sensor/${user.uuid}/${sensorUuid}/data`))
            .data as unknown[]
        ).length,
        1,
      );
      assert.equal(
        (await partnerClient.call('GET', `/api/partner/sensor/${outsider.uuid}`)).status,
        'wrong-user',
      );
      assert.equal(
        (await partnerClient.call('GET', `/api/partner/sensor/${otherUser.uuid}`)).status,
        'wrong-user',
      );
      const otherUserOwn = await ownerWithBox(app, { partnerUuid: partner.uuid });
      assert.equal(
        (await partnerClient.call('GET', `/api/partner/sensor/${otherUserOwn.user.uuid}/${sensorUuid}`))
          .status,
        'wrong-sensor',
      );
      assert.equal((await client.call('GET', `/api/partner/sensor/${user.uuid}`)).status, 'no-auth');

      await client.call('POST', `/api/sensor/${sensorUuid}/action`, { switch: false });
      const task = await firmware.task();
      await firmware.answer(task.id, { status: 'failure', message: 'no receipt' });
      const action = await waitEvent(partnerClient, 'partner_sensor_action');
      assert.equal(action.status, 'failure');
      assert.equal(action.message, 'no receipt');
      assert.equal(action.user, user.uuid);
    });
  });
}
