import { defineArea } from '../../platform/area.js';
import { CallAreaDirectory } from './call-directory.js';

export { CallAreaDirectory } from './call-directory.js';

/**
 * The call engine's view of the API areas: gives the engine (services.telephony) its directory.
 * Listed after the areas it reads (SIP accounts, numbers, dialplans, announcements, recordings).
 */
export const callArea = defineArea({
  name: 'call',
  create: (s, { database, log }) => {
    s.telephony.useDirectory(new CallAreaDirectory(s, database.db, log.child({ module: 'call' })));
    return {};
  },
});
