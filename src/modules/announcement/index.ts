export { announcementRoutes } from './announcement.routes.js';
export { AnnouncementService } from './announcement.service.js';
