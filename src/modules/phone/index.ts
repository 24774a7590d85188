import { defineArea } from '../../platform/area.js';
import { PhoneService as Phones } from './phone.service.js';

export {
  type PhoneHolders,
  type PhoneNumber,
  PhoneService,
  type PhoneServiceDeps,
} from './phone.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly phones: Phones;
  }
}

export const phoneArea = defineArea({
  name: 'phone',
  create: (s, { database }) => ({
    phones: new Phones({ db: database.db, writer: s.writer, users: s.users, partners: s.partners }),
  }),
});
