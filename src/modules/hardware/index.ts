export {
  HARDWARE_CODE_LIMIT,
  type HardwareCode,
  HardwareCodeService,
} from './hardware.service.js';
