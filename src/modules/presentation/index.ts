export { presentationRoutes } from './presentation.routes.js';
export { PresentationService } from './presentation.service.js';
export {
  DROP_AFTER_MS,
  KEEPALIVE_INTERVAL_MS,
  MEMBER_STATUS_DELAY_MS,
  MEMBER_STATUS_MAX_DELAY_MS,
  PresentationLiveService,
  type StatusPayload,
} from './presentation-live.service.js';
export { presentationPageRoutes } from './presentation-page.routes.js';
