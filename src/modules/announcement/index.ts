import { defineArea } from '../../platform/area.js';
import { announcementRoutes as routes } from './announcement.routes.js';
import { AnnouncementService as Announcements } from './announcement.service.js';

export { announcementRoutes } from './announcement.routes.js';
export { AnnouncementService } from './announcement.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly announcements: Announcements;
  }
}

export const announcementArea = defineArea({
  name: 'announcement',
  create: (s, { log }) => ({ announcements: new Announcements({ store: s.store, content: s.content, log }) }),
  routes: (app, s) => routes(app, s.announcements),
});
