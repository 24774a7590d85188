import { defineArea } from '../../platform/area.js';
import { PartnerService as Partners } from './partner.service.js';
import { partnerApiRoutes } from './partner-api.routes.js';
import { PartnerApiService } from './partner-api.service.js';
import { partnerStreamRoutes } from './partner-stream.routes.js';
import { PartnerStreamService } from './partner-stream.service.js';

export { PARTNER_RIGHTS, type Partner, type PartnerRight, PartnerService } from './partner.service.js';
export { PartnerApiService } from './partner-api.service.js';
export { PartnerStreamService } from './partner-stream.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly partners: Partners;
    readonly partnerApi: PartnerApiService;
    readonly partnerStreams: PartnerStreamService;
  }
}

export const partnerArea = defineArea({
  name: 'partner',
  create: (s, { clock }) => ({ partners: new Partners(s.writer, clock) }),
});

/**
 * Spec "Partner API" routes for users and phones. Made after the areas it drives (users,
 * accounts, features, phones, sessions, recovery), so it comes late in the area list.
 */
export const partnerApiArea = defineArea({
  name: 'partner-api',
  create: (s) => ({
    partnerApi: new PartnerApiService({
      writer: s.writer,
      partners: s.partners,
      users: s.users,
      accounts: s.accounts,
      features: s.features,
      phones: s.phones,
      recovery: s.recovery,
      sessions: s.sessions,
      // The usergroup area comes later; it is asked at call time.
      usergroups: { usergroupOf: (user) => s.usergroups.usergroupOf(user) },
      telephony: s.telephony,
    }),
  }),
  routes: (app, s) => partnerApiRoutes(app, s.partnerApi),
});

/**
 * Spec "Partner API" event streams and CDR lists: made after the areas whose events and records
 * it passes on (CDRs), so it comes after them in the area list.
 */
export const partnerStreamArea = defineArea({
  name: 'partner-stream',
  create: (s, { database, log, clock }) => ({
    partnerStreams: new PartnerStreamService({
      db: database.db,
      writer: s.writer,
      hub: s.hub,
      partnerApi: s.partnerApi,
      users: s.users,
      phones: s.phones,
      cdrs: s.cdrs,
      log: log.child({ module: 'partner-stream' }),
      clock,
    }),
  }),
  routes: (app, s) => partnerStreamRoutes(app, s.partnerStreams),
  start: (s) => s.partnerStreams.start(),
  stop: (s) => s.partnerStreams.stop(),
});
