import { defineArea } from '../../platform/area.js';
import { loadSecretBox } from '../../platform/sealing.js';
import { dialplanRoutes as routes } from './dialplan.routes.js';
import { DialplanService as Dialplans } from './dialplan.service.js';

export { dialplanRoutes } from './dialplan.routes.js';
export { DialplanSimulation, LegacyDecisionView } from './dialplan.schema.js';
export { DialplanService } from './dialplan.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly dialplans: Dialplans;
  }
}

/** Spec "Dialplan v2", "Legacy dialplan and call features". */
export const dialplanArea = defineArea({
  name: 'dialplan',
  create: (s, { config, database, clock }) => ({
    dialplans: new Dialplans({
      clock,
      db: database.db,
      writer: s.writer,
      announcements: s.announcements,
      phones: s.phones,
      callFilters: s.callFilters,
      box: loadSecretBox(config),
    }),
  }),
  routes: (app, s) => routes(app, s.dialplans),
});
