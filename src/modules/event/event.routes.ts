/** Route of spec "Events": the GET /api/event long-poll. */
import type { AppInstance } from '../../platform/server.js';
import { GetEventAnswer, GetEventQuery } from './event.schema.js';

export function eventRoutes(app: AppInstance, isClosing: () => boolean): void {
  app.get(
    '/api/event',
    {
      config: { access: 'auth' },
      schema: {
        summary: 'Wait for the next events of the session (long-poll)',
        tags: ['event'],
        querystring: GetEventQuery,
        response: { 200: GetEventAnswer },
      },
    },
    async (request) => {
      const queue = request.session!.queue;
      const next = request.query.next ?? queue.nextId;
      // A node that is shutting down answers at once rather than holding the call.
      const timeout = isClosing() ? 0 : (request.query.timeout ?? 30);
      return { event: await queue.wait(next, timeout) };
    },
  );
}
