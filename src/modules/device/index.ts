export { DEVICE_KEY, type Device, DeviceService, type NewDevice } from './device.service.js';
