export {
  HARDWARE_CODE,
  HARDWARE_CODE_LIMIT,
  type HardwareCode,
  HardwareCodeService,
} from './hardware.service.js';
