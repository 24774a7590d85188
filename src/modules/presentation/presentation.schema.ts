/**
 * Schemas of spec "Presentation": the object calls, slide and PDF transfers, event
 * subscription and POST /api/presentation/{uuid}/control.
 */
import { type Static, Type } from 'typebox';
import { DeleteQuery, ObjectParams, TagList } from '../../platform/object-store/index.js';
import { envelope, Flag, Uuid } from '../../platform/schema.js';

const Description = Type.String({ pattern: '^.{0,200}$' });

export const PresentationParams = ObjectParams;

export const CreatePresentationBody = Type.Object({ description: Type.Optional(Description) });
export type CreatePresentationBody = Static<typeof CreatePresentationBody>;

export const UpdatePresentationBody = Type.Object({ description: Description });
export type UpdatePresentationBody = Static<typeof UpdatePresentationBody>;

export const UuidAnswer = envelope({ uuid: Uuid });

export const PresentationObject = Type.Object({
  owner: Uuid,
  time: Type.Integer(),
  description: Type.String(),
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
});
export type PresentationObject = Static<typeof PresentationObject>;

export const GetPresentationAnswer = envelope({ presentation: PresentationObject });

export const DeletePresentationQuery = DeleteQuery;

/** did/dkey authentication and `inline` (Authentication 5, Conventions 10). */
export const DownloadQuery = Type.Object({
  inline: Flag,
  sid: Type.Optional(Type.String()),
  did: Type.Optional(Type.String({ description: 'download id of the session (instead of a session)' })),
  dkey: Type.Optional(Type.String({ description: 'base64url(md5(lower-case presentation UUID + sid))' })),
});
export type DownloadQuery = Static<typeof DownloadQuery>;

export const SlideParams = Type.Object({
  uuid: Uuid,
  page: Type.Integer({ minimum: 1, description: 'slide number, 1-based' }),
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

export const FileParams = Type.Object({
  uuid: Uuid,
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

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
