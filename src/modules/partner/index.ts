import { defineArea } from '../../platform/area.js';
import { PartnerService as Partners } from './partner.service.js';

export { PARTNER_RIGHTS, type Partner, type PartnerRight, PartnerService } from './partner.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly partners: Partners;
  }
}

export const partnerArea = defineArea({
  name: 'partner',
  create: (_s, { database }) => ({ partners: new Partners(database.db) }),
});
