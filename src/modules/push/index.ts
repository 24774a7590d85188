import { defineArea } from '../../platform/area.js';
import { loadSecretBox } from '../../platform/sealing.js';
import { ApnsSender } from './push.apns.js';
import { PushDelivery } from './push.delivery.js';
import { FcmSender } from './push.fcm.js';
import { Http2Pool } from './push.http2.js';
import { pushRoutes as routes } from './push.routes.js';
import { PushService as Pushes } from './push.service.js';
import { PushApplicationService as PushApplications } from './push-application.service.js';
import { FcmCredentialService as FcmCredentials } from './push-fcm.service.js';

export { PushDelivery } from './push.delivery.js';
export { Http2Pool } from './push.http2.js';
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
export { type FcmCredentialInfo, FcmCredentialService } from './push-fcm.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly pushApplications: PushApplications;
    readonly pushFcmCredentials: FcmCredentials;
    /**
     * Push messages to users' devices (spec "Events", push events): faxNew, recordingNew,
     * callReverse (dialplan_callreverse_start/stop), chatMessage, ruleEngineNotification.
     */
    readonly push: Pushes;
    /** The worker that sends queued pushes (started with the server, not in the CLI). */
    readonly pushDelivery: PushDelivery;
    /** The push services' HTTP/2 connections. */
    readonly pushConnections: Http2Pool;
  }
}

export const pushArea = defineArea({
  name: 'push',
  create: (s, { config, log, clock }) => {
    const box = loadSecretBox(config);
    const pushApplications = new PushApplications(s.writer, box, clock);
    const pushFcmCredentials = new FcmCredentials(s.writer, box, clock);
    const pushConnections = new Http2Pool(config.pushCaFile);
    const pushDelivery = new PushDelivery({
      writer: s.writer,
      log: log.child({ module: 'push' }),
      senders: {
        apns: new ApnsSender({
          pool: pushConnections,
          productionUrl: config.pushApnsUrl,
          sandboxUrl: config.pushApnsSandboxUrl,
          credentials: (id) => pushApplications.findCredentials(id),
          clock,
        }),
        fcm: new FcmSender({
          pool: pushConnections,
          fcmUrl: config.pushFcmUrl,
          tokenUrl: config.pushOauthTokenUrl,
          credentials: () => pushFcmCredentials.findCredentials(),
          clock,
        }),
      },
      clock,
    });
    const push = new Pushes({
      writer: s.writer,
      applications: pushApplications,
      queued: () => pushDelivery.kick(),
      clock,
    });
    return { pushApplications, pushFcmCredentials, push, pushDelivery, pushConnections };
  },
  routes: (app, s) => routes(app, s.push),
  start: async (s) => {
    await s.pushApplications.sealClearKeys();
    s.chats.onMessage((sent) => s.push.chatMessage(sent).then(() => {}));
    s.pushDelivery.start();
  },
  stop: async (s) => {
    await s.pushDelivery.stop();
    s.pushConnections.close();
  },
});
