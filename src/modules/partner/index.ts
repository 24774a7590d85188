import { defineArea } from '../../platform/area.js';
import { PartnerService as Partners } from './partner.service.js';
import { partnerApiRoutes } from './partner-api.routes.js';
import { PartnerApiService } from './partner-api.service.js';

export { PARTNER_RIGHTS, type Partner, type PartnerRight, PartnerService } from './partner.service.js';
export { PartnerApiService } from './partner-api.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly partners: Partners;
    readonly partnerApi: PartnerApiService;
  }
}

export const partnerArea = defineArea({
  name: 'partner',
  create: (_s, { database }) => ({ partners: new Partners(database.db) }),
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
    }),
  }),
  routes: (app, s) => partnerApiRoutes(app, s.partnerApi),
});
