import { defineArea } from '../../platform/area.js';
import { ivrRoutes as routes } from './ivr.routes.js';
import { IvrService as Ivrs } from './ivr.service.js';

export { ivrRoutes } from './ivr.routes.js';
export { IvrSimulation } from './ivr.schema.js';
export { IvrService } from './ivr.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly ivrs: Ivrs;
  }
}

/** Spec "IVR"; also tells the phone area what may answer a number (dialplan, IVR). */
export const ivrArea = defineArea({
  name: 'ivr',
  create: (s, { database }) => {
    const ivrs = new Ivrs({
      db: database.db,
      writer: s.writer,
      announcements: s.announcements,
      phones: s.phones,
    });
    s.phones.useAnswerers({ announcements: s.announcements, dialplans: s.dialplans, ivrs });
    return { ivrs };
  },
  routes: (app, s) => routes(app, s.ivrs),
});
