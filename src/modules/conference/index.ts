import { defineArea } from '../../platform/area.js';
import { conferenceRoutes as routes } from './conference.routes.js';
import { ConferenceService as Conferences } from './conference.service.js';

export type { LiveRooms, MemberView, Room } from './conference.events.js';
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
  create: (s, { clock, log }) => ({
    conferences: new Conferences({
      store: s.store,
      announcements: s.announcements,
      phones: s.phones,
      users: s.users,
      recordings: s.recordings,
      hub: s.hub,
      writer: s.writer,
      clock,
      log,
    }),
  }),
  routes: (app, s) => routes(app, s.conferences),
  start: (s) => s.conferences.events.start(),
  stop: (s) => s.conferences.events.stop(),
});
