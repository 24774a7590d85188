import { defineArea } from '../../platform/area.js';
import { idcardcheckRoutes as routes } from './idcardcheck.routes.js';

export { idcardcheckRoutes } from './idcardcheck.routes.js';

/** Spec "Internal API": the idcardcheck calls (jeye, statistics, usage and mwi come later). */
export const internalArea = defineArea({
  name: 'internal',
  routes: (app, s) => routes(app, s.accounts),
});
