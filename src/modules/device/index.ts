import { defineArea } from '../../platform/area.js';
import { deviceRoutes as routes } from './device.routes.js';
import { DeviceService as Devices } from './device.service.js';
import { DeviceProtocolService as DeviceProtocol } from './device-protocol.service.js';

export { type Device, DeviceService, type NewDevice, type OwnerChange } from './device.service.js';
export {
  type DeviceConnection,
  DeviceProtocolService,
  type DeviceTask,
  type TaskAnswer,
  type TaskOptions,
} from './device-protocol.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly devices: Devices;
    /** Device sessions and tasks (spec "Device API"). */
    readonly deviceProtocol: DeviceProtocol;
  }
}

export const deviceArea = defineArea({
  name: 'device',
  create: (s, { config, log, clock }) => {
    const devices = new Devices(s.writer, s.users, clock);
    const deviceProtocol = new DeviceProtocol({
      clock,
      writer: s.writer,
      hub: s.hub,
      sessions: s.sessions,
      devices,
      publicUrl: config.publicUrl,
      log,
    });
    devices.onDeleted((uuid) => deviceProtocol.disconnect(uuid));
    devices.onLicenseChanged(async (device) => {
      if (await deviceProtocol.connection(device.uuid))
        deviceProtocol.sendLicense(device.uuid, device.license);
    });
    return { devices, deviceProtocol };
  },
  routes: (app, s, { config, isClosing }) => routes(app, s.deviceProtocol, config.publicUrl, isClosing),
  start: (s) => s.deviceProtocol.start(),
  closing: (s) => s.deviceProtocol.releaseWaiters(),
  stop: (s) => s.deviceProtocol.stop(),
});
