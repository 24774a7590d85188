export { contactRoutes } from './contact.routes.js';
export { ContactService } from './contact.service.js';
