export { faxRoutes } from './fax.routes.js';
export { FaxService, type NewFaxReport } from './fax.service.js';
