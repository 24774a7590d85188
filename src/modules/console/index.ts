import { defineArea } from '../../platform/area.js';
import { consoleRoutes } from './console.routes.js';

export { consoleRoutes } from './console.routes.js';

/** The user console: a static page served by the server (docs/decisions.md "Console"). */
export const consoleArea = defineArea({
  name: 'console',
  routes: (app) => consoleRoutes(app),
});
