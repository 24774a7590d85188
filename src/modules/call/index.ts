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
    const callLog = log.child({ module: 'call' });
    s.telephony.useDirectory(new CallAreaDirectory(s, database.db, callLog));
    // POST /api/dialplan/callback is carried out by this node's engine once recorded.
    s.dialplans.onCallbackRequest((user) => {
      const calls = s.telephony.calls;
      if (!calls) {
        callLog.warn({ user }, 'callback recorded while the call engine is not running');
        return;
      }
      void calls
        .callback(user)
        .catch((error: unknown) => callLog.error({ err: error, user }, 'callback failed'));
    });
    return {};
  },
});
