import { defineArea } from '../../platform/area.js';
import { phoneRoutes as routes } from './phone.routes.js';
import { PhoneService as Phones } from './phone.service.js';

export { phoneRoutes } from './phone.routes.js';
export { PartnerPhoneBody, PartnerPhoneSettings } from './phone.schema.js';
export {
  effectiveSwitches,
  type NumberAnswerers,
  type PartnerSwitches,
  type PhoneHolders,
  type PhoneNumber,
  PhoneService,
  type PhoneServiceDeps,
  type StoredSettings,
  SWITCH_DEFAULTS,
} from './phone.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly phones: Phones;
  }
}

export const phoneArea = defineArea({
  name: 'phone',
  create: (s, { database, clock }) => ({
    phones: new Phones({ clock, db: database.db, writer: s.writer, users: s.users, partners: s.partners }),
  }),
  routes: (app, s) => routes(app, s.phones),
});
