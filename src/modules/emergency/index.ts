import { defineArea } from '../../platform/area.js';
import { emergencyRoutes as routes } from './emergency.routes.js';
import { EmergencyService as Emergency } from './emergency.service.js';

export { emergencyRoutes } from './emergency.routes.js';
export { type EmergencyData, EmergencyService } from './emergency.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly emergency: Emergency;
  }
}

/** Spec "Partner API" emergency data; the call engine reads it through `emergencyDataOf`. */
export const emergencyArea = defineArea({
  name: 'emergency',
  create: (s, { database }) => ({
    emergency: new Emergency({ db: database.db, writer: s.writer, partners: s.partnerApi }),
  }),
  routes: (app, s) => routes(app, s.emergency),
});
