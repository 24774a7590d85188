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
        description:
          'Answers the retained events with id >= next (at most 100), at once if there are any, ' +
          'else with the first ones to arrive, or [] after timeout seconds. Retention: the newest ' +
          '1000 events for 10 minutes, and at most 4 MB of events (serialized) per session: the ' +
          'byte bound wins, dropping the oldest first; one event is at most 256 KB. A client ' +
          'behind the window gets the oldest retained events and sees the gap in the ids. Ids are ' +
          'never issued twice, also across a crash of the node (events are stored before they ' +
          'can be read). A session holds at most 4 long-polls: a fifth answers the oldest held ' +
          'one at once with what it has ([]).',
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
