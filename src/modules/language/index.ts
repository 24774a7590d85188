import { defineArea } from '../../platform/area.js';
import { languageRoutes as routes } from './language.routes.js';

export { languageRoutes } from './language.routes.js';

export const languageArea = defineArea({
  name: 'language',
  routes: (app) => routes(app),
});
