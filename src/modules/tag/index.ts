export { tagRoutes } from './tag.routes.js';
export { TagService } from './tag.service.js';
