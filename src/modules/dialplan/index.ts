export { dialplanRoutes } from './dialplan.routes.js';
export { DialplanSimulation, LegacyDecisionView } from './dialplan.schema.js';
export { DialplanService } from './dialplan.service.js';
