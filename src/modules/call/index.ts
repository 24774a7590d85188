import { defineArea } from '../../platform/area.js';
import { callRoutes } from './call.routes.js';
import { CallApiService } from './call.service.js';
import { CallNodes } from './call-nodes.js';
import { CallAreaRecorder } from './call-recorder.js';
import { CallAreaRouting } from './call-routing.js';

export { CallApiService, requireOutgoing } from './call.service.js';
export { CallNodes } from './call-nodes.js';
export { CallAreaRecorder } from './call-recorder.js';
export { CallAreaRouting } from './call-routing.js';

declare module '../../platform/area.js' {
  interface Services {
    /** Spec "Calls": the call API (GET /api/call, call events). */
    readonly callApi: CallApiService;
    /** The call API over every node sharing the database (call-nodes.ts). */
    readonly callNodes: CallNodes;
  }
}

/**
 * The call engine's view of the API areas: gives the engine (services.telephony) what it reads
 * (CallAreaRouting) and where it records (CallAreaRecorder).
 * Listed after the areas it reads (SIP accounts, numbers, dialplans, announcements, recordings).
 */
export const callArea = defineArea({
  name: 'call',
  create: (s, { database, log, clock }) => {
    const callLog = log.child({ module: 'call' });
    const routing = new CallAreaRouting(s, database.db, callLog, clock);
    s.telephony.useDirectory({
      routing,
      recorder: new CallAreaRecorder(s, database.db, callLog, clock),
    });
    // conference_status lists the members of the room, live on this node or another.
    s.conferences.events.attachRooms({ members: (id) => s.conferenceControl.liveMembers(id) });
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
    const callApi = new CallApiService({
      db: database.db,
      writer: s.writer,
      hub: s.hub,
      telephony: s.telephony,
      sip: s.sip,
      phones: s.phones,
      callFilters: s.callFilters,
      clock,
      log: callLog,
      commands: {
        recordings: s.recordings,
        announcementWav: (user, uuid) => routing.announcementWav(user, uuid),
        speak: (text, locale) => s.content.speakForCalls(text, locale),
      },
    });
    const callNodes = new CallNodes(s.hub, callApi, s.telephony, callLog);
    // The partner's call counts (GET /api/partner/user/{uuid}/calls) come from every node's registry.
    s.telephony.countCallsWith((numbers) => callNodes.callsTo(numbers));
    // A conference room lives on one node: the others reach it over the same path.
    s.conferenceControl.useNodes(callNodes);
    return { callApi, callNodes };
  },
  routes: (app, s) => callRoutes(app, s.callApi, s.callNodes),
  start: async (s) => {
    await s.callApi.start();
    await s.callNodes.start();
  },
  stop: async (s) => {
    s.callApi.stop();
    await s.callNodes.stop();
  },
});
