import { defineArea } from '../../platform/area.js';
import { loadSecretBox } from '../../platform/sealing.js';
import { sipRoutes as routes } from './sip.routes.js';
import { SipService as Sip } from './sip.service.js';

/** What other areas use of the SIP accounts (spec "SIP accounts"). */
export { findSipAccountByUsername, findSipAccountOwner } from './sip.repository.js';
export { sipRoutes } from './sip.routes.js';
export {
  BLF_LIMIT,
  defaultSipDomain,
  type SipAccountRecord,
  SipService,
  type SipServiceDeps,
  type SipTelephony,
  type UsergroupSource,
} from './sip.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly sip: Sip;
  }
}

/** Spec "SIP accounts": accounts, registrations (from the call engine), notify and BLF. */
export const sipArea = defineArea({
  name: 'sip',
  create: (s, { config, database, log, clock }) => ({
    sip: new Sip({
      clock,
      db: database.db,
      writer: s.writer,
      hub: s.hub,
      config,
      users: s.users,
      features: s.features,
      phones: s.phones,
      telephony: s.telephony,
      usergroups: s.usergroups,
      box: loadSecretBox(config),
      log,
    }),
  }),
  routes: (app, s) => routes(app, s.sip),
  start: async (s) => {
    s.sip.start();
    await s.sip.sealClearPasswords();
  },
});
