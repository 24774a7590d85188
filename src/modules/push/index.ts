import { defineArea } from '../../platform/area.js';
import { loadSecretBox } from '../../platform/sealing.js';
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
  create: (s, { config }) => ({ pushApplications: new PushApplications(s.writer, loadSecretBox(config)) }),
  start: (s) => s.pushApplications.sealClearKeys(),
});
