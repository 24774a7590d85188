export { sessionRoutes } from './session.routes.js';
export { type SessionOrigin, SessionService } from './session.service.js';
