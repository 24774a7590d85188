import { defineArea } from '../../platform/area.js';
import { EventSocketServer } from '../../platform/events/event-socket.js';
import { eventRoutes as routes } from './event.routes.js';
import { EventService as Events } from './event.service.js';

export { eventRoutes } from './event.routes.js';
export { EventService } from './event.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly eventFilters: Events;
    readonly eventSockets: EventSocketServer;
  }
}

/** Spec "Events": the GET /api/event long-poll, its WebSocket form and the session's event filter. */
export const eventArea = defineArea({
  name: 'event',
  create: (s, { log }) => ({
    eventFilters: new Events(s.writer, s.hub),
    eventSockets: new EventSocketServer(s.sessions, s.hub, log),
  }),
  routes: (app, s, { isClosing }) => {
    routes(app, s.hub, s.eventFilters, isClosing);
    s.eventSockets.attach(app.server);
  },
  start: (s) => s.eventFilters.start(),
  closing: (s) => s.eventSockets.close(),
});
