import { defineArea } from '../../platform/area.js';
import { usergroupRoutes as routes } from './usergroup.routes.js';
import { UsergroupService as Usergroups } from './usergroup.service.js';

export { usergroupRoutes } from './usergroup.routes.js';
export { MAX_USERGROUPS, UsergroupService } from './usergroup.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly usergroups: Usergroups;
  }
}

/**
 * Spec "Partner API" usergroups (with credit, extension, limit and zonefilter, shapes ours).
 * The user object, the partner user object, BLF and the call engine read `usergroupOf` and the
 * other lookups through this index.
 */
export const usergroupArea = defineArea({
  name: 'usergroup',
  create: (s, { database, clock }) => ({
    usergroups: new Usergroups({
      clock,
      db: database.db,
      writer: s.writer,
      partners: s.partnerApi,
      enterprises: s.enterprises,
    }),
  }),
  routes: (app, s) => routes(app, s.usergroups),
});
