import { defineArea } from '../../platform/area.js';
import { PushApplicationService as PushApplications } from './push-application.service.js';

export {
  APPLE_ID,
  APPLICATION_ID,
  type NewPushApplication,
  type PushApplication,
  PushApplicationService,
  type PushCredentials,
} from './push-application.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly pushApplications: PushApplications;
  }
}

export const pushArea = defineArea({
  name: 'push',
  create: (s) => ({ pushApplications: new PushApplications(s.writer) }),
});
