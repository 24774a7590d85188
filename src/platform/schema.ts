/**
 * Shared schema pieces: the response envelope, flags, the bodies and
 * fields of the object calls, and the parameters of binary transfers.
 */
import { type Static, type TProperties, Type } from 'typebox';
import { Description, Uuid } from './formats.js';
import { named } from './openapi/components.js';

/** Every JSON answer: `status` (ok unless an error) plus the call's own fields. */
export function envelope<P extends TProperties>(properties: P) {
  return Type.Object({
    // fast-json-stringify writes the default when the handler leaves status out.
    status: Type.Optional(Type.String({ default: 'ok' })),
    message: Type.Optional(Type.String()),
    ...properties,
  });
}

/** `{}`: the answer that carries only status ok. */
export const Empty = named('Empty', envelope({}));

/** A presence flag such as `purge` or `inline`: present (any value) means set. */
export const Flag = Type.Optional(Type.String());

export function isSet(flag: string | undefined): boolean {
  return flag !== undefined;
}

// ---- objects (spec Resources; decisions.md "Objects and tags")

export const CreateObjectBody = Type.Object({ description: Type.Optional(Description) });
export type CreateObjectBody = Static<typeof CreateObjectBody>;

export const UpdateObjectBody = Type.Object({ description: Description });
export type UpdateObjectBody = Static<typeof UpdateObjectBody>;

/** The answer of a call that creates something. */
export const UuidAnswer = named('UuidAnswer', envelope({ uuid: Uuid }));

/** The fields every object shows first; its type's fields, `status` and `tag` follow. */
export const OBJECT_FIELDS = { owner: Uuid, time: Type.Integer(), description: Type.String() };

/** `status` of an object with converted content (fax, announcement, recording, presentation). */
export const CONTENT_STATUSES = ['record', 'ok', 'convert', 'empty', 'fail'] as const;
export type ContentStatus = (typeof CONTENT_STATUSES)[number];

// ---- binary transfers

/** did/dkey authentication and `inline` (Authentication 5, Conventions 10). */
export const DownloadQuery = Type.Object({
  inline: Flag,
  sid: Type.Optional(Type.String()),
  did: Type.Optional(Type.String({ description: 'download id of the session (instead of a session)' })),
  dkey: Type.Optional(
    Type.String({ description: 'base64url(md5(lower-case UUID named by the call + sid))' }),
  ),
});
export type DownloadQuery = Static<typeof DownloadQuery>;

const FileName = Type.String({ description: 'file name chosen by the client; no effect' });

/** `{uuid}/{xxx}.ext`: a file of an object; the name is the client's. */
export const FileParams = Type.Object({ uuid: Uuid, name: FileName });

/** `{uuid}/{page}/{xxx}.png`: one page (a fax page, a slide) of an object. */
export const PageParams = Type.Object({
  uuid: Uuid,
  page: Type.Integer({ minimum: 1, description: 'page number, 1-based' }),
  name: FileName,
});

/**
 * The query of an event subscription with a lifetime (GET /api/partner/user/event, GET
 * /api/call/event; spec "Limits": 1..36000 s, default 3600), renewed by calling again.
 */
export const SubscribeQuery = Type.Object({
  timeout: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 36000,
      default: 3600,
      description: 'seconds the subscription lasts unless renewed by calling again (1..36000, default 3600)',
    }),
  ),
});
export type SubscribeQuery = Static<typeof SubscribeQuery>;
