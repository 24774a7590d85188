import { defineArea } from '../../platform/area.js';
import { faxRoutes as routes } from './fax.routes.js';
import { FaxService as Faxes } from './fax.service.js';

export { faxRoutes } from './fax.routes.js';
export { FaxService, type NewFaxReport } from './fax.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly faxes: Faxes;
  }
}

export const faxArea = defineArea({
  name: 'fax',
  create: (s, { log }) => ({
    faxes: new Faxes({
      store: s.store,
      content: s.content,
      log,
      faxPageQuota: async (db, user) => (await s.features.quotaOf(user, db)).quota.fax,
    }),
  }),
  routes: (app, s) => routes(app, s.faxes),
});
