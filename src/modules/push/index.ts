import { defineArea } from '../../platform/area.js';
import { loadSecretBox } from '../../platform/sealing.js';
import { pushRoutes as routes } from './push.routes.js';
import { PushService as Pushes } from './push.service.js';
import { PushApplicationService as PushApplications } from './push-application.service.js';

export { type PushMessage, RULE_PUSH_LIMIT, ruleNotification } from './push.messages.js';
export type { PushSystem } from './push.repository.js';
export { APNS_TOPIC, MAX_REGISTRATIONS, PushService } from './push.service.js';
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
    /**
     * Push messages to users' devices (spec "Events", push events): faxNew, recordingNew,
     * callReverse (dialplan_callreverse_start/stop), chatMessage, ruleEngineNotification.
     */
    readonly push: Pushes;
  }
}

export const pushArea = defineArea({
  name: 'push',
  create: (s, { config }) => {
    const pushApplications = new PushApplications(s.writer, loadSecretBox(config));
    const push = new Pushes({ writer: s.writer, applications: pushApplications });
    return { pushApplications, push };
  },
  routes: (app, s) => routes(app, s.push),
  start: async (s) => {
    await s.pushApplications.sealClearKeys();
    s.chats.onMessage((sent) => s.push.chatMessage(sent).then(() => {}));
  },
});
