/**
 * Schemas of POST /api/device/csp (spec "Device API") and of the /api/sensor and
 * /api/partner/sensor families (listed in the spec without shapes).
 */
import { type Static, Type } from 'typebox';
import { Description, Uuid } from '../../platform/formats.js';
import { ObjectParams, TagList } from '../../platform/object-store/index.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';
import { CAPABILITIES } from './sensor.packet.js';

export const SENSOR_LIST_COUNT = { default: 50, max: 500 };
/** Spec 1.7.0: larger item counts for sensor data. */
export const SENSOR_DATA_COUNT = { default: 100, max: 5000 };
/** Sensors one user owns at most; packets of further addresses are exceeded-limit. */
export const MAX_SENSORS = 200;
/** Readings kept per sensor (the oldest go first). */
export const MAX_READINGS = 10_000;
/** A packet id heard again within this many seconds is the same reading. */
export const DUPLICATE_SECONDS = 30;

export { ObjectParams };

export const CspBody = Type.Object({
  packet: Type.String({ pattern: '^.{10,500}$', description: 'base64 of the packet (format above)' }),
  time: Type.Integer({
    minimum: 0,
    maximum: 2 ** 40,
    description: 'when the box received it, seconds since epoch',
  }),
  rssi: Type.Integer({ minimum: -200, maximum: 50, description: 'dBm' }),
  lqi: Type.Integer({ minimum: 0, maximum: 255, description: 'link quality, higher is better' }),
});
export type CspBody = Static<typeof CspBody>;

const Value = Type.Union([Type.Number(), Type.Boolean()]);
const Values = Type.Record(Type.String(), Value, {
  description: `capability name to value: ${CAPABILITIES.map((c) => c.name).join(', ')}`,
});

export const Sensor = Type.Object({
  owner: Uuid,
  time: Type.Integer({ description: 'when the sensor was first heard' }),
  description: Type.String(),
  proto_type: Type.Integer(),
  address: Type.String({ description: '8 hex digits' }),
  capability: Type.Array(Type.String(), { description: 'the capabilities the sensor has reported' }),
  value: Values,
  value_time: Type.Optional(Type.Integer({ description: 'time of the newest reading' })),
  rssi: Type.Optional(Type.Integer({ description: 'of the newest reading' })),
  lqi: Type.Optional(Type.Integer()),
  box: Type.Optional(Uuid),
  tag: TagList,
});
export type Sensor = Static<typeof Sensor>;

export const ListSensorsQuery = Type.Object(pageQuery(SENSOR_LIST_COUNT));
export type ListSensorsQuery = Static<typeof ListSensorsQuery>;

export const ListSensorsAnswer = envelope({
  sensor: Type.Record(Type.String(), Sensor, {
    description: "one page of the user's own sensors (not in the trash) keyed by UUID, first heard first",
  }),
});
export const GetSensorAnswer = envelope({ sensor: Sensor });

export const UpdateSensorBody = Type.Object({ description: Description });
export type UpdateSensorBody = Static<typeof UpdateSensorBody>;

export const Reading = Type.Object({
  uuid: Uuid,
  time: Type.Integer({ description: 'when the box received it' }),
  value: Values,
  rssi: Type.Integer(),
  lqi: Type.Integer(),
  box: Uuid,
});
export type Reading = Static<typeof Reading>;

export const DataQuery = Type.Object(pageQuery(SENSOR_DATA_COUNT));
export type DataQuery = Static<typeof DataQuery>;
export const DataAnswer = envelope({ data: Type.Array(Reading) });

export const ActionBody = Type.Object({
  switch: Type.Optional(Type.Boolean({ description: 'on (true) or off' })),
  level: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'percent' })),
  wait_recv: Type.Optional(
    Type.Boolean({ description: "the box waits for the sensor's next packet as receipt (default true)" }),
  ),
  wait_timeout: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 300, description: 'seconds the box waits for it (default 10)' }),
  ),
});
export type ActionBody = Static<typeof ActionBody>;
export const ActionAnswer = envelope({ action: Uuid });

export const PartnerUserParams = Type.Object({ user: Uuid });
export const PartnerSensorParams = Type.Object({ user: Uuid, uuid: Uuid });
