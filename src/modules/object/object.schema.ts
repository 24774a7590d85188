/**
 * Schemas of spec "Comments, links, metadata": comments on objects, links between objects,
 * object metadata and user metadata.
 */
import { type Static, Type } from 'typebox';
import { Uuid } from '../../platform/formats.js';
import { ObjectParams } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope, Flag } from '../../platform/schema.js';

export const COMMENT_LIST_COUNT = { default: 100, max: 1000 };

/** Metadata keys: reverse-domain form. */
export const KEY_PATTERN = '^[a-z0-9]{2,50}(\\.[a-z0-9]{2,50}){1,10}$';
/** A domain: one or more labels; its keys are those below it. */
export const DOMAIN_PATTERN = '^[a-z0-9]{2,50}(\\.[a-z0-9]{2,50}){0,10}$';
/** Most links an object has (exceeded-limit beyond), so that its link list stays bounded. */
export const LINK_MAX = 100;
/** Largest metadata value, as JSON text (too-large beyond). */
export const METADATA_VALUE_MAX = 100 * 1024;
/** Most bytes (keys and values as JSON text) a user's own metadata takes in all (quota-exceeded). */
export const USER_METADATA_MAX = 1024 * 1024;

/** What the object metadata and comment routes document about the volume quota. */
export const OBJECT_VOLUME_RULE =
  'The bytes stored (metadata keys and values as JSON text, comment texts) count against the ' +
  "volume quota of the object's owner (used.volume of GET /api/user): quota-exceeded, with " +
  'nothing changed, when a write would exceed it.';
/** What the user metadata routes document about their bound. */
export const USER_METADATA_RULE =
  "A user's metadata takes at most 1 MB in all (keys and values as JSON text): quota-exceeded, " +
  'with nothing changed, when a write would take it beyond.';

/** What the metadata routes of objects and users document about keys, values and flags. */
export const METADATA_RULES =
  'Keys match ^[a-z0-9]{2,50}(\\.[a-z0-9]{2,50}){1,10}$; values are any JSON of at most 100 KB (too-large). ' +
  'Query noevent: no event; nostore: nothing is stored, only the event is sent. ' +
  'too-large, with nothing changed, when the event would exceed 256 KB serialized.';

export { ObjectParams };

// Line breaks are allowed in comments; the limit is 1..1000 characters.
const CommentText = Type.String({ pattern: '^[\\s\\S]{1,1000}$', description: '1 to 1000 characters' });

export const ListCommentsQuery = Type.Object(pageQuery(COMMENT_LIST_COUNT));
export type ListCommentsQuery = Static<typeof ListCommentsQuery>;

export const CommentObject = named(
  'Comment',
  Type.Object({
    uuid: Uuid,
    owner: Uuid,
    text: Type.String(),
    time: Type.Integer(),
    modified: Type.Integer({ description: 'time of the last change of the text' }),
  }),
);
export type CommentObject = Static<typeof CommentObject>;

export const ListCommentsAnswer = envelope({
  comment: Type.Array(CommentObject, { description: 'one page of the comments, in time order' }),
});

export const CommentBody = Type.Object({ text: CommentText });
export type CommentBody = Static<typeof CommentBody>;

export const LinkParams = Type.Object({ uuid: Uuid, other: Uuid });

export const ListLinksAnswer = envelope({
  link: Type.Record(Type.String(), Type.Object({ type: Type.String({ description: 'object type' }) }), {
    description: 'linked objects the user may read, by UUID',
  }),
});

export const MetadataQuery = Type.Object({
  keys: Type.Optional(Type.String({ maxLength: 10_000, description: 'comma-separated keys' })),
  domain: Type.Optional(Type.String({ pattern: DOMAIN_PATTERN, description: 'all keys below this domain' })),
});
export type MetadataQuery = Static<typeof MetadataQuery>;

export const MetadataAnswer = envelope({
  metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'key -> value' }),
});

export const SetMetadataQuery = Type.Object({
  noevent: Flag,
  nostore: Flag,
});
export type SetMetadataQuery = Static<typeof SetMetadataQuery>;

export const SetMetadataBody = Type.Object({
  update: Type.Optional(
    Type.Record(Type.String({ pattern: KEY_PATTERN }), Type.Unknown(), {
      additionalProperties: false,
      // As many as `delete` takes: one statement writes them all, within both databases' bounds.
      maxProperties: 1000,
      description: `key (${KEY_PATTERN}) -> value (any JSON, at most 100 KB); at most 1000 keys`,
    }),
  ),
  delete: Type.Optional(Type.Array(Type.String({ pattern: KEY_PATTERN }), { maxItems: 1000 })),
});
export type SetMetadataBody = Static<typeof SetMetadataBody>;
