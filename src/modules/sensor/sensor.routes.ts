/**
 * Routes of POST /api/device/csp (spec "Device API") and of the /api/sensor and
 * /api/partner/sensor families (listed in the spec without shapes).
 */
import { partnerOf, sessionOf, userOf } from '../../platform/access.js';
import { DeleteQuery } from '../../platform/object-store/index.js';
import { Empty, isSet } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import type { PartnerApiService } from '../partner/index.js';
import { describeFormat } from './sensor.packet.js';
import {
  ActionAnswer,
  ActionBody,
  CspBody,
  DataAnswer,
  DataQuery,
  GetSensorAnswer,
  ListSensorsAnswer,
  ListSensorsQuery,
  ObjectParams,
  PartnerSensorParams,
  PartnerUserParams,
  UpdateSensorBody,
} from './sensor.schema.js';
import type { SensorService } from './sensor.service.js';

const SENSOR_EVENTS =
  'Events to the users who may read the sensor: sensor_data {sensor, reading, owner, time, value, rssi, ' +
  'lqi, box} for every reading, sensor_action {sensor, action, value, status, rssi, lqi, message} with ' +
  "the result of an action; object_new when a sensor is first heard. The owner's partner gets " +
  'partner_sensor_data and partner_sensor_action with the same fields and `user` (the owner).';

export function sensorRoutes(app: AppInstance, sensors: SensorService, partnerApi: PartnerApiService): void {
  app.post(
    '/api/device/csp',
    {
      config: { access: 'device' },
      schema: {
        summary: 'A radio packet the box received (CSP): a sensor reading, or counted as unknown',
        description:
          `${describeFormat()} The reading belongs to the sensor of the box's owner with that protocol ` +
          "type and address; a sensor object is made when an owner's box first hears it (at most 200 " +
          'sensors per owner: exceeded-limit beyond). Packets of a box without owner and of a sensor in ' +
          'the trash are taken and dropped. The newest 10,000 readings of a sensor are kept.',
        tags: ['device', 'sensor'],
        body: CspBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await sensors.receivePacket(sessionOf(request).deviceUuid!, request.body);
      return {};
    },
  );

  app.get(
    '/api/sensor',
    {
      config: { access: 'user' },
      schema: {
        summary: "The user's own sensors with their last values, paged (Conventions 8)",
        description: `Sensors others share are listed through their tags. ${SENSOR_EVENTS}`,
        tags: ['sensor'],
        querystring: ListSensorsQuery,
        response: { 200: ListSensorsAnswer },
      },
    },
    async (request) => ({ sensor: await sensors.listSensors(userOf(request), request.query) }),
  );

  app.get(
    '/api/sensor/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One sensor with its capabilities and last values; wrong-sensor unless readable',
        tags: ['sensor'],
        params: ObjectParams,
        response: { 200: GetSensorAnswer },
      },
    },
    async (request) => ({ sensor: await sensors.getSensor(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/sensor/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: "Change a sensor's description (object_modify); write access needed",
        tags: ['sensor'],
        params: ObjectParams,
        body: UpdateSensorBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await sensors.updateSensor(userOf(request), request.params.uuid, request.body.description);
      return {};
    },
  );

  app.delete(
    '/api/sensor/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Move a sensor to the trash, or delete it with purge (object_delete)',
        description:
          'A sensor in the trash takes no readings (its packets are dropped); restoring it goes on. A ' +
          "purged sensor is gone with its readings; it is made anew when one of the owner's boxes hears it.",
        tags: ['sensor'],
        params: ObjectParams,
        querystring: DeleteQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await sensors.deleteSensor(userOf(request), request.params.uuid, isSet(request.query.purge));
      return {};
    },
  );

  app.get(
    '/api/sensor/:uuid/data',
    {
      config: { access: 'user' },
      schema: {
        summary:
          "A sensor's readings, paged (Conventions 8; start is a reading UUID; count 1..5000, default 100)",
        tags: ['sensor'],
        params: ObjectParams,
        querystring: DataQuery,
        response: { 200: DataAnswer },
      },
    },
    async (request) => ({
      data: await sensors.listData(userOf(request), request.params.uuid, request.query),
    }),
  );

  app.post(
    '/api/sensor/:uuid/action',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Send an action to a sensor (write access): switch and/or level',
        description:
          'The action goes out as a csp task (spec Device API, Tasks) through the box that heard the ' +
          'sensor last: csp_proto_type and csp_address (the address as an unsigned integer) of the sensor, ' +
          'csp_packet_id counting 0..255 per sensor, csp_time, csp_payload (base64 capability records ' +
          'as in POST /api/device/csp: 0x04 switch, 0x0c level), wait_recv and wait_timeout. The call ' +
          "answers the action's UUID at once; the box's answer comes as sensor_action (status ok, replaced " +
          'when a newer action superseded it, or a failure with message; box-offline and fail when the ' +
          'box went offline or did not answer within wait_timeout + 20 s). missing-element without ' +
          'switch or level; illegal-state for a capability the sensor never reported; box-offline when ' +
          'no online box of the owner heard it. ' +
          SENSOR_EVENTS,
        tags: ['sensor'],
        params: ObjectParams,
        body: ActionBody,
        response: { 200: ActionAnswer },
      },
    },
    async (request) => ({ action: await sensors.action(userOf(request), request.params.uuid, request.body) }),
  );

  app.get(
    '/api/partner/sensor/:user',
    {
      config: { access: 'partner' },
      schema: {
        summary: "A partner user's own sensors, paged; wrong-user unless the user is the partner's",
        description:
          'The partner sessions get partner_sensor_data and partner_sensor_action for the sensors of its users.',
        tags: ['partner', 'sensor'],
        params: PartnerUserParams,
        querystring: ListSensorsQuery,
        response: { 200: ListSensorsAnswer },
      },
    },
    async (request) => {
      const user = await partnerApi.requireOwnUser(partnerOf(request), request.params.user);
      return { sensor: await sensors.partnerSensors(user.uuid, request.query) };
    },
  );

  app.get(
    '/api/partner/sensor/:user/:uuid',
    {
      config: { access: 'partner' },
      schema: {
        summary: "One sensor of a partner user; wrong-user, wrong-sensor (not the user's own)",
        tags: ['partner', 'sensor'],
        params: PartnerSensorParams,
        response: { 200: GetSensorAnswer },
      },
    },
    async (request) => {
      const user = await partnerApi.requireOwnUser(partnerOf(request), request.params.user);
      return { sensor: await sensors.partnerSensor(user.uuid, request.params.uuid) };
    },
  );

  app.get(
    '/api/partner/sensor/:user/:uuid/data',
    {
      config: { access: 'partner' },
      schema: {
        summary: "The readings of a partner user's sensor, paged as GET /api/sensor/{uuid}/data",
        tags: ['partner', 'sensor'],
        params: PartnerSensorParams,
        querystring: DataQuery,
        response: { 200: DataAnswer },
      },
    },
    async (request) => {
      const user = await partnerApi.requireOwnUser(partnerOf(request), request.params.user);
      return { data: await sensors.partnerData(user.uuid, request.params.uuid, request.query) };
    },
  );
}
