import { defineArea } from '../../platform/area.js';
import { ConferenceControl } from './conference.control.js';
import { conferenceRoutes as routes } from './conference.routes.js';
import { ConferenceService as Conferences } from './conference.service.js';

export type { LiveRooms, MemberView, Room } from './conference.events.js';
export { conferenceRoutes } from './conference.routes.js';
export { type ConferenceRoom, ConferenceService } from './conference.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly conferences: Conferences;
    readonly conferenceControl: ConferenceControl;
  }
}

/** The spec's `/api/conference` family (docs/decisions.md "Conferences"). */
export const conferenceArea = defineArea({
  name: 'conference',
  create: (s, { clock, log }) => {
    const conferences = new Conferences({
      store: s.store,
      announcements: s.announcements,
      phones: s.phones,
      users: s.users,
      recordings: s.recordings,
      hub: s.hub,
      writer: s.writer,
      clock,
      log,
    });
    const control = new ConferenceControl({
      store: s.store,
      definition: conferences.definition,
      telephony: s.telephony,
      phones: s.phones,
      callFilters: s.callFilters,
    });
    return { conferences, conferenceControl: control };
  },
  routes: (app, s) => routes(app, s.conferences, s.conferenceControl),
  start: (s) => s.conferences.events.start(),
  stop: (s) => s.conferences.events.stop(),
});
