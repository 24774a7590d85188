export { PARTNER_RIGHTS, type Partner, type PartnerRight, PartnerService } from './partner.service.js';
