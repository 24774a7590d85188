import { defineArea } from '../../platform/area.js';
import { HardwareCodeService as HardwareCodes } from './hardware.service.js';

export {
  HARDWARE_CODE_LIMIT,
  type HardwareCode,
  HardwareCodeService,
} from './hardware.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly hardwareCodes: HardwareCodes;
  }
}

export const hardwareArea = defineArea({
  name: 'hardware',
  create: (s, { clock }) => ({ hardwareCodes: new HardwareCodes(s.writer, clock) }),
});
