export { objectRoutes } from './object.routes.js';
export { ObjectService } from './object.service.js';
