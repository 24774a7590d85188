import { defineArea } from '../../platform/area.js';
import { enterpriseRoutes as routes } from './enterprise.routes.js';
import { EnterpriseService as Enterprises } from './enterprise.service.js';

export { enterpriseRoutes } from './enterprise.routes.js';
export { EnterpriseService } from './enterprise.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly enterprises: Enterprises;
  }
}

/** Spec "Partner API" `/api/partner/enterprise` (shape ours); usergroups read its prefix flag. */
export const enterpriseArea = defineArea({
  name: 'enterprise',
  create: (s, { database }) => ({
    enterprises: new Enterprises({ db: database.db, writer: s.writer, partners: s.partnerApi }),
  }),
  routes: (app, s) => routes(app, s.enterprises),
});
