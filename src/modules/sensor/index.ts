import { defineArea } from '../../platform/area.js';
import { sensorRoutes as routes } from './sensor.routes.js';
import { SensorService as Sensors } from './sensor.service.js';

export { CAPABILITIES, decodePacket, encodePacket, type SensorValue } from './sensor.packet.js';
export type { Reading } from './sensor.schema.js';
export {
  type ReadingListener,
  type SensorReading,
  SensorService,
  type UnknownPackets,
} from './sensor.service.js';

declare module '../../platform/area.js' {
  interface Services {
    /** Sensors and their readings; for a rule engine: lastReading, subscribe, sendAction. */
    readonly sensors: Sensors;
  }
}

/** POST /api/device/csp, the /api/sensor and /api/partner/sensor families. */
export const sensorArea = defineArea({
  name: 'sensor',
  create: (s, { log, clock }) => ({
    sensors: new Sensors({
      clock,
      store: s.store,
      devices: s.devices,
      protocol: s.deviceProtocol,
      users: s.users,
      log,
    }),
  }),
  routes: (app, s) => routes(app, s.sensors, s.partnerApi),
});
