import { defineArea } from '../../platform/area.js';
import { idcardcheckRoutes as routes } from './idcardcheck.routes.js';
import { internalRoutes } from './internal.routes.js';
import { InternalService } from './internal.service.js';

export { idcardcheckRoutes } from './idcardcheck.routes.js';
export { InternalService } from './internal.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly internal: InternalService;
  }
}

/** Spec "Internal API": the idcardcheck calls. */
export const internalArea = defineArea({
  name: 'internal',
  routes: (app, s) => routes(app, s.accounts),
});

/**
 * Spec "Internal API": jeye, mwi, statistics and usage; made after the areas it reads (CDRs,
 * numbers, partners), so it comes late in the area list.
 */
export const internalDataArea = defineArea({
  name: 'internal-data',
  create: (s, { database, clock }) => ({
    internal: new InternalService({
      clock,
      db: database.db,
      writer: s.writer,
      cdrs: s.cdrs,
      users: s.users,
      store: s.store,
      phones: s.phones,
      partners: s.partners,
    }),
  }),
  routes: (app, s) => internalRoutes(app, s.internal),
});
