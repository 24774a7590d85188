export {
  APPLE_ID,
  APPLICATION_ID,
  type NewPushApplication,
  type PushApplication,
  PushApplicationService,
  type PushCredentials,
} from './push-application.service.js';
