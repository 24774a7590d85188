/** Schemas of spec "Events": GET /api/event (layout per decisions.md). */
import { type Static, Type } from 'typebox';
import { envelope } from '../../platform/schema.js';

export const GetEventQuery = Type.Object({
  next: Type.Optional(
    Type.Integer({ minimum: 0, description: "first event id wanted; default the session's next_event" }),
  ),
  timeout: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 300, default: 30, description: 'seconds to wait' }),
  ),
});

export const EventSkeleton = Type.Object(
  {
    id: Type.Integer({ description: 'unique within the session; 0 for its first event, +1 each' }),
    event: Type.String({ description: 'event name' }),
    time: Type.Integer({ description: 'seconds since epoch' }),
  },
  { additionalProperties: true, description: 'event skeleton plus the payload fields of the event' },
);

export const GetEventAnswer = envelope({
  event: Type.Array(EventSkeleton, {
    description: 'retained events with id >= next, in id order, at most 100',
  }),
});

/** Names one filter may list (a session's filter is bounded). */
export const EVENT_FILTER_MAX = 100;

export const EventFilterBody = Type.Object({
  event: Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_]{0,49}$', description: 'an event name' }), {
    minItems: 1,
    maxItems: EVENT_FILTER_MAX,
    description:
      'the event names the session receives from now on (1 to 100; DELETE lets every event in again); ' +
      'names no event has are allowed and simply never arrive',
  }),
});
export type EventFilterBody = Static<typeof EventFilterBody>;

export const EventFilterAnswer = envelope({
  event: Type.Array(Type.String(), { description: 'the filter as stored: the names, sorted, each once' }),
});

export const EventSocketQuery = Type.Object({
  next: Type.Optional(
    Type.Integer({ minimum: 0, description: "first event id wanted; default the session's next_event" }),
  ),
  sid: Type.Optional(
    Type.String({ description: 'the session id, when neither Bearer nor the cookie carries it' }),
  ),
});
