import { defineArea } from '../../platform/area.js';
import { faxEngineAvailable } from '../../telephony/index.js';
import type { StoredSettings } from '../phone/index.js';
import { FaxIncoming } from './fax.incoming.js';
import { FaxQueue } from './fax.queue.js';
import { faxRoutes as routes } from './fax.routes.js';
import { FaxSending } from './fax.send.js';
import { FaxService as Faxes } from './fax.service.js';

export { FaxIncoming } from './fax.incoming.js';
export { faxRoutes } from './fax.routes.js';
export { FaxSending } from './fax.send.js';
export { FaxService, type NewFaxReport } from './fax.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly faxes: Faxes;
    /** Received faxes: the call engine's recorder tells it (CallRecorder.faxStarted, faxEnded). */
    readonly faxIncoming: FaxIncoming;
    /** POST /api/fax/{uuid}/send and feature.used.fax. */
    readonly faxSending: FaxSending;
    /** The worker that runs queued transmissions; it runs only on a node with a call engine. */
    readonly faxQueue: FaxQueue;
  }
}

export const faxArea = defineArea({
  name: 'fax',
  create: (s, { config, log, clock }) => {
    const faxes = new Faxes({
      store: s.store,
      content: s.content,
      log,
      faxPageQuota: async (db, user) => (await s.features.quotaOf(user, db)).quota.fax,
    });
    const faxIncoming = new FaxIncoming({
      store: s.store,
      content: s.content,
      faxes,
      log,
      clock,
      notification: async (number) => {
        const settings = ((await s.phones.findNumber(number))?.settings ?? {}) as StoredSettings;
        return {
          ...(settings.notification_email ? { email: settings.notification_email } : {}),
          attachment: settings.notification_attachment === true,
        };
      },
      language: async (owner) => ((await s.users.findUser(owner))?.language === 'en' ? 'en' : 'de'),
      pushFaxNew: (owner, fax) => s.push.faxNew(owner, fax),
      sendMail: (to, notice) => s.mailer.sendNotice(to, notice),
    });
    const faxSending = new FaxSending({
      writer: s.writer,
      faxes,
      clock,
      findNumber: (number) => s.phones.findNumber(number),
      findUser: (user, db) => s.users.findUser(user, db),
      features: async (user, db) => {
        const { quota, feature } = await s.features.quotaOf(user, db);
        return { faxPages: quota.fax, unrestricted: feature.call_unrestricted };
      },
      queued: () => faxQueue.kick(),
      faxEngine: () => faxEngineAvailable(config.faxLibrary),
    });
    const faxQueue = new FaxQueue({
      writer: s.writer,
      faxes,
      sending: faxSending,
      content: s.content,
      line: {
        sendFax: (request) => {
          if (!s.telephony.calls) throw new Error('the call engine stopped');
          return s.telephony.calls.sendFax(request);
        },
      },
      log: log.child({ module: 'fax' }),
      clock,
      callLimit: async (user, db) => (await s.features.quotaOf(user, db)).quota.calls,
      retrySeconds: config.faxRetrySeconds,
    });
    return { faxes, faxIncoming, faxSending, faxQueue };
  },
  routes: (app, s) => routes(app, s.faxes, s.faxSending),
  // A node without a call engine leaves the queue to the nodes that have one.
  start: (s) => {
    if (s.telephony.calls) s.faxQueue.start();
  },
  stop: (s) => s.faxQueue.stop(),
});
