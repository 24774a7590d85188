import { defineArea } from '../../platform/area.js';
import { eventRoutes as routes } from './event.routes.js';
import { EventService as Events } from './event.service.js';

export { eventRoutes } from './event.routes.js';
export { EventService } from './event.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly eventFilters: Events;
  }
}

/** Spec "Events": the GET /api/event long-poll and the session's event filter. */
export const eventArea = defineArea({
  name: 'event',
  create: (s) => ({ eventFilters: new Events(s.writer, s.hub) }),
  routes: (app, s, { isClosing }) => routes(app, s.hub, s.eventFilters, isClosing),
  start: (s) => s.eventFilters.start(),
});
