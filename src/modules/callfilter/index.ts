import { defineArea } from '../../platform/area.js';
import { callFilterRoutes as routes } from './callfilter.routes.js';
import { CallFilterService as CallFilters } from './callfilter.service.js';

export { callFilterRoutes } from './callfilter.routes.js';
export { CallFilterService } from './callfilter.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly callFilters: CallFilters;
  }
}

/** Spec "Partner API" call filters; the call engine reads them through `callFilterOf`. */
export const callFilterArea = defineArea({
  name: 'callfilter',
  create: (s, { database, clock }) => ({
    callFilters: new CallFilters({ clock, db: database.db, writer: s.writer, partners: s.partnerApi }),
  }),
  routes: (app, s) => routes(app, s.callFilters),
});
