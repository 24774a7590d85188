export {
  type PhoneHolders,
  type PhoneNumber,
  PhoneService,
  type PhoneServiceDeps,
} from './phone.service.js';
