import { defineArea } from '../../platform/area.js';
import { ipqualityRoutes as routes } from './ipquality.routes.js';
import { IpqualityService as Ipqualities } from './ipquality.service.js';
import { IpqualityRunner } from './ipquality-runner.js';

export { ipqualityRoutes } from './ipquality.routes.js';
export { IpqualityService } from './ipquality.service.js';
export { IpqualityRunner } from './ipquality-runner.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly ipquality: Ipqualities;
    /** Runs the measurements of active ipquality objects (spec "ipquality"). */
    readonly ipqualityRunner: IpqualityRunner;
  }
}

/** Spec "ipquality": measurements between two boxes through the device protocol's tasks. */
export const ipqualityArea = defineArea({
  name: 'ipquality',
  create: (s, { database, log, clock }) => {
    const ipqualityRunner = new IpqualityRunner({
      db: database.db,
      writer: s.writer,
      protocol: s.deviceProtocol,
      canRead: (user, box) => s.boxes.canRead(user, box),
      log,
      clock,
    });
    const ipquality = new Ipqualities({
      store: s.store,
      boxes: s.boxes,
      clock,
      poke: () => ipqualityRunner.poke(),
    });
    return { ipquality, ipqualityRunner };
  },
  routes: (app, s) => routes(app, s.ipquality),
  start: (s) => s.ipqualityRunner.start(),
  stop: (s) => s.ipqualityRunner.stop(),
});
