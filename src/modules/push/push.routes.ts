/** Routes of spec "Push registration" (`/api/push`). */
import { userOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { PushAnswer, PushBody } from './push.schema.js';
import { MAX_REGISTRATIONS, type PushService } from './push.service.js';

export function pushRoutes(app: AppInstance, push: PushService): void {
  app.get(
    '/api/push',
    {
      config: { access: 'user' },
      schema: {
        summary: "The caller's push registrations",
        tags: ['push'],
        response: { 200: PushAnswer },
      },
    },
    async (request) => push.listRegistrations(userOf(request)),
  );

  app.post(
    '/api/push',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Add or delete a push registration',
        description:
          `A user keeps at most ${MAX_REGISTRATIONS} registrations (both systems together): adding one more ` +
          'drops the one added longest ago (a reinstalled app gets a new token and never deletes its old one). ' +
          'Adding a token again refreshes it. Devices then receive the push messages of spec "Events" ' +
          '(fax_new, recording_new, dialplan_callreverse_start/stop, chat_message, rule_engine_notification).',
        tags: ['push'],
        body: PushBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await push.changeRegistration(userOf(request), request.body);
      return {};
    },
  );
}
