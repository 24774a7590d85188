/**
 * Schemas of spec "Presentation": the object, event subscription and POST
 * /api/presentation/{uuid}/control (the object calls and transfers use the shared pieces).
 */
import { type Static, Type } from 'typebox';
import { TagList } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { envelope, OBJECT_FIELDS } from '../../platform/schema.js';

export const PresentationObject = named(
  'Presentation',
  Type.Object({
    ...OBJECT_FIELDS,
    page_count: Type.Optional(
      Type.Integer({ description: 'number of slides; absent until converted content exists' }),
    ),
    busy: Type.Boolean({ description: 'true while the presentation is started (has members)' }),
    status: Type.Union(
      [Type.Literal('ok'), Type.Literal('convert'), Type.Literal('empty'), Type.Literal('fail')],
      {
        description:
          'ok: slides available; convert: an upload is being converted; empty: no content (new, or a PDF ' +
          'without pages); fail: the conversion failed',
      },
    ),
    tag: TagList,
  }),
);
export type PresentationObject = Static<typeof PresentationObject>;

export const GetPresentationAnswer = envelope({ presentation: PresentationObject });

export const SubscribeAnswer = envelope({
  busy: Type.Boolean({ description: 'true when started; a presentation_status event follows' }),
});

export const CONTROLS = [
  'start',
  'stop',
  'join',
  'leave',
  'keepalive',
  'moderator',
  'page',
  'pointer',
] as const;
export type Control = (typeof CONTROLS)[number];

const Coordinate = Type.Number({ minimum: 0, maximum: 1 });

export const ControlBody = Type.Object({
  control: Type.Union(
    CONTROLS.map((control) => Type.Literal(control)),
    { description: 'the transition of the presentation state table' },
  ),
  moderator: Type.Optional(
    Type.String({ format: 'uuid', description: 'control moderator: the new moderator' }),
  ),
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'control page: slide number, 1..page_count' })),
  x: Type.Optional(Coordinate),
  y: Type.Optional(Coordinate),
  visible: Type.Optional(Type.Boolean()),
});
export type ControlBody = Static<typeof ControlBody>;
