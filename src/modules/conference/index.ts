import { defineArea } from '../../platform/area.js';
import { conferenceRoutes as routes } from './conference.routes.js';
import { ConferenceService as Conferences } from './conference.service.js';

export { conferenceRoutes } from './conference.routes.js';
export { type ConferenceRoom, ConferenceService } from './conference.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly conferences: Conferences;
  }
}

/** The spec's `/api/conference` family (docs/decisions.md "Conferences"). */
export const conferenceArea = defineArea({
  name: 'conference',
  create: (s) => ({
    conferences: new Conferences({
      store: s.store,
      announcements: s.announcements,
      phones: s.phones,
      users: s.users,
    }),
  }),
  routes: (app, s) => routes(app, s.conferences),
});
