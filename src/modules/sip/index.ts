export { sipRoutes } from './sip.routes.js';
export {
  BLF_LIMIT,
  type SipAccountRecord,
  SipService,
  type SipServiceDeps,
  type SipTelephony,
  type UsergroupSource,
} from './sip.service.js';
