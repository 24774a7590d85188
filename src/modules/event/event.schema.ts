/** Schemas of spec "Events": GET /api/event (layout per decisions.md). */
import { Type } from 'typebox';
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
