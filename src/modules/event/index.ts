export { eventRoutes } from './event.routes.js';
