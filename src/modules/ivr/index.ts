export { ivrRoutes } from './ivr.routes.js';
export { IvrSimulation } from './ivr.schema.js';
export { IvrService } from './ivr.service.js';
