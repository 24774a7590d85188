export { phoneRoutes } from './phone.routes.js';
export {
  type NumberAnswerers,
  type PartnerSwitches,
  PHONE,
  type PhoneHolders,
  type PhoneNumber,
  PhoneService,
  type PhoneServiceDeps,
  SWITCH_DEFAULTS,
} from './phone.service.js';
