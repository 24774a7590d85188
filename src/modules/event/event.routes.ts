/** Routes of spec "Events": the GET /api/event long-poll and POST/DELETE /api/event/filter. */
import { sessionOf } from '../../platform/access.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import {
  EVENT_SOCKET_BUFFER_MAX,
  EVENT_SOCKET_CLOSE_SESSION,
  EVENT_SOCKET_CLOSE_SLOW,
  EVENT_SOCKET_PATH,
  EVENT_SOCKET_PER_SESSION,
} from '../../platform/events/event-socket.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  EventFilterAnswer,
  EventFilterBody,
  EventSocketQuery,
  GetEventAnswer,
  GetEventQuery,
} from './event.schema.js';
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

  app.get(
    EVENT_SOCKET_PATH,
    {
      config: { access: 'auth' },
      schema: {
        summary: 'The event channel as a WebSocket',
        description:
          'Open with a WebSocket upgrade (RFC 6455); authentication as for GET /api/event (sid as Bearer, ' +
          "`sid` cookie or `sid` parameter; an authenticated session; a browser's Origin must be the " +
          "session's). Each text message is one event, the same object with the same id as in the " +
          "long-poll's `event` array, in id order; the channel reads the same queue (retention, filter, " +
          "topics). `next`: first event id wanted, default the session's next_event; after a reconnect " +
          'pass the id after the last one received, and nothing is lost or repeated within retention (a ' +
          'gap in the ids shows events that left the window). A refused upgrade answers HTTP 200 with ' +
          'the status envelope (no-session, no-auth, wrong-origin, wrong-syntax; exceeded-limit: the session ' +
          `holds ${EVENT_SOCKET_PER_SESSION} connections already). The server pings every ` +
          '30 seconds and closes a connection that did not answer the last ping. Close codes: 1001 the ' +
          `node stops (reconnect); ${EVENT_SOCKET_CLOSE_SLOW} the client read too slowly (over ` +
          `${EVENT_SOCKET_BUFFER_MAX / 1024 / 1024} MB waiting to be sent; reconnect with next); ` +
          `${EVENT_SOCKET_CLOSE_SESSION} the session ended; 1008 the client sent a message (the channel ` +
          'takes none). Without an Upgrade header this route answers wrong-syntax.',
        tags: ['event'],
        querystring: EventSocketQuery,
        response: { 200: Empty },
      },
    },
    async () => {
      throw new ApiError('wrong-syntax', 'open this route with a WebSocket upgrade');
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
