/** What other areas use of the SIP accounts (spec "SIP accounts"). */
export { findSipAccountOwner } from './sip.repository.js';
