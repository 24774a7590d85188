import { defineArea } from '../../platform/area.js';
import { cnamRoutes as routes } from './cnam.routes.js';
import { CnamService as Cnams } from './cnam.service.js';

export { cnamRoutes } from './cnam.routes.js';
export { CnamService } from './cnam.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly cnams: Cnams;
  }
}

/** Caller-name delivery of users and usergroups (shapes ours); the call engine asks `callerNameOf`. */
export const cnamArea = defineArea({
  name: 'cnam',
  create: (s, { database }) => ({
    cnams: new Cnams({ db: database.db, writer: s.writer, usergroups: s.usergroups }),
  }),
  routes: (app, s) => routes(app, s.cnams),
});
