/** What other areas use of the SIP accounts (spec "SIP accounts"). */
export { findSipAccountByUsername, findSipAccountOwner } from './sip.repository.js';
