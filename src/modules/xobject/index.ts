export { xobjectRoutes } from './xobject.routes.js';
export { XObjectService } from './xobject.service.js';
