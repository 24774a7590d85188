import { defineArea } from '../../platform/area.js';
import { xobjectRoutes as routes } from './xobject.routes.js';
import { XObjectService as XObjects } from './xobject.service.js';

export { xobjectRoutes } from './xobject.routes.js';
export { XObjectService } from './xobject.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly xobjects: XObjects;
  }
}

export const xobjectArea = defineArea({
  name: 'xobject',
  create: (s) => ({ xobjects: new XObjects(s.store) }),
  routes: (app, s) => routes(app, s.xobjects),
});
