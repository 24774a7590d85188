import { defineArea } from '../../platform/area.js';
import { sessionRoutes as routes } from './session.routes.js';
import { SessionService as Sessions } from './session.service.js';

export { sessionRoutes } from './session.routes.js';
export { type SessionOrigin, SessionService } from './session.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly sessions: Sessions;
  }
}

/** Spec "Session and sign-up", "Authentication": sessions survive restarts (start/stop). */
export const sessionArea = defineArea({
  name: 'session',
  create: (s, { config, database, log, clock }) => ({
    sessions: new Sessions({
      db: database.db,
      writer: s.writer,
      hub: s.hub,
      events: s.events,
      config,
      users: s.users,
      partners: s.partners,
      throttle: s.throttle,
      log,
      clock,
    }),
  }),
  routes: (app, s, { config }) => routes(app, s.sessions, config.publicUrl),
  start: (s) => s.sessions.start(),
  closing: (s) => s.sessions.releaseWaiters(),
  stop: (s) => s.sessions.stop(),
});
