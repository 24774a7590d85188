/** Routes of spec "Events": the GET /api/event long-poll and POST/DELETE /api/event/filter. */
import { sessionOf } from '../../platform/access.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { EventFilterAnswer, EventFilterBody, GetEventAnswer, GetEventQuery } from './event.schema.js';
import type { EventService } from './event.service.js';

export function eventRoutes(
  app: AppInstance,
  hub: EventHub,
  events: EventService,
  isClosing: () => boolean,
): void {
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
          'one at once with what it has ([]). A partner session subscribed to partner events ' +
          '(GET /api/partner/user/event, /api/partner/cdr/event) takes its share of them while it polls here.',
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
      if (timeout === 0) {
        await hub.polled(queue);
        return { event: await queue.wait(next, 0) };
      }
      // The wait begins first, so that whatever the poll handlers hand the session answers it.
      const answer = queue.wait(next, timeout);
      await hub.polled(queue);
      return { event: await answer };
    },
  );

  app.post(
    '/api/event/filter',
    {
      config: { access: 'auth' },
      schema: {
        summary: 'Receive only the events named',
        description:
          "Body `{event: [names]}` (1 to 100 names, each `^[a-z][a-z0-9_]{0,49}$`): from now on the session's " +
          'queue takes only events of these names; others are not kept for it (they do not use up ids). A new ' +
          'filter replaces the old one; the filter lasts as long as the session (also across a restart of the ' +
          'node). Answers the stored filter.',
        tags: ['event'],
        body: EventFilterBody,
        response: { 200: EventFilterAnswer },
      },
    },
    async (request) => ({ event: await events.setFilter(sessionOf(request), request.body.event) }),
  );

  app.delete(
    '/api/event/filter',
    {
      config: { access: 'auth' },
      schema: {
        summary: 'Receive every event again',
        description: 'Removes the filter of POST /api/event/filter (none set: ok too).',
        tags: ['event'],
        response: { 200: Empty },
      },
    },
    async (request) => {
      await events.clearFilter(sessionOf(request));
      return {};
    },
  );
}
