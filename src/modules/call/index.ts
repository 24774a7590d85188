import { defineArea } from '../../platform/area.js';
import { CallAreaRecorder } from './call-recorder.js';
import { CallAreaRouting } from './call-routing.js';

export { CallAreaRecorder } from './call-recorder.js';
export { CallAreaRouting } from './call-routing.js';

/**
 * The call engine's view of the API areas: gives the engine (services.telephony) what it reads
 * (CallAreaRouting) and where it records (CallAreaRecorder).
 * Listed after the areas it reads (SIP accounts, numbers, dialplans, announcements, recordings).
 */
export const callArea = defineArea({
  name: 'call',
  create: (s, { database, log }) => {
    const callLog = log.child({ module: 'call' });
    s.telephony.useDirectory({
      routing: new CallAreaRouting(s, database.db, callLog),
      recorder: new CallAreaRecorder(s, database.db, callLog),
    });
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
