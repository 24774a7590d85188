export { type Device, DeviceService, type NewDevice } from './device.service.js';
