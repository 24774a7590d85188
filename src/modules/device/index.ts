import { defineArea } from '../../platform/area.js';
import { DeviceService as Devices } from './device.service.js';

export { type Device, DeviceService, type NewDevice } from './device.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly devices: Devices;
  }
}

export const deviceArea = defineArea({
  name: 'device',
  create: (s) => ({ devices: new Devices(s.writer, s.users) }),
});
