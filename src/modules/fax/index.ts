import { defineArea } from '../../platform/area.js';
import type { StoredSettings } from '../phone/index.js';
import { FaxIncoming } from './fax.incoming.js';
import { faxRoutes as routes } from './fax.routes.js';
import { FaxService as Faxes } from './fax.service.js';

export { FaxIncoming } from './fax.incoming.js';
export { faxRoutes } from './fax.routes.js';
export { FaxService, type NewFaxReport } from './fax.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly faxes: Faxes;
    /** Received faxes: the call engine's recorder tells it (CallRecorder.faxStarted, faxEnded). */
    readonly faxIncoming: FaxIncoming;
  }
}

export const faxArea = defineArea({
  name: 'fax',
  create: (s, { log, clock }) => {
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
    return { faxes, faxIncoming };
  },
  routes: (app, s) => routes(app, s.faxes),
});
