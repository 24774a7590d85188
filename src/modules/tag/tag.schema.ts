/**
 * Schemas of the /api/tag family and POST /api/object/{uuid}/tag
 * (decisions.md "Objects and tags"; the spec lists these routes without their shapes).
 */
import { type Static, Type } from 'typebox';
import { Uuid } from '../../platform/formats.js';
import { ObjectParams, TagList, UUID_PATTERN } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

export const TAG_LIST_COUNT = { default: 50, max: 1000 };

export const UuidParams = ObjectParams;

const Label = Type.String({ pattern: '^.{1,100}$', description: 'label of the tag' });

/** Levels a tag's owner gives others: 1 read, 2 write, 3 propagate; 0 removes the user. */
const PolicyInput = Type.Record(
  Type.String({ pattern: UUID_PATTERN }),
  Type.Integer({ minimum: 0, maximum: 3 }),
  {
    additionalProperties: false,
    description:
      'user UUID -> level (1 read, 2 write, 3 propagate; 0 removes the user). Users must be linked.',
  },
);

export const TagObject = named(
  'Tag',
  Type.Object({
    owner: Uuid,
    label: Type.String(),
    kind: Type.Union(
      [Type.Literal('system'), Type.Literal('share'), Type.Literal('custom'), Type.Literal('object')],
      {
        description:
          "system tags (tag_all ...), personal share tags (share_read ...), tags users made, or a tag held by one object (a chat's, giving its participants access), changed only through that object's calls",
      },
    ),
    foreign_use: Type.Boolean({
      description: 'users with write level on the tag may put it on objects they hold propagate on',
    }),
    policy: Type.Record(Type.String(), Type.Integer({ minimum: 0, maximum: 4 }), {
      description:
        "user UUID -> level: 1 read, 2 write, 3 propagate, 4 owner. The owner sees the whole policy; anyone else only the owner's entry and its own (not the other users the owner shares with), also in tag_new and tag_modify",
    }),
  }),
);

export const ListTagsAnswer = envelope({
  tag: Type.Record(Type.String(), TagObject, { description: 'every tag the user may read, by UUID' }),
});

export const CreateTagBody = Type.Object({
  label: Label,
  policy: Type.Optional(PolicyInput),
  foreign_use: Type.Optional(Type.Boolean()),
});
export type CreateTagBody = Static<typeof CreateTagBody>;

export const GetTagAnswer = envelope({ tag: TagObject });

export const UpdateTagBody = Type.Object({
  label: Type.Optional(Label),
  policy: Type.Optional(PolicyInput),
  foreign_use: Type.Optional(Type.Boolean()),
});
export type UpdateTagBody = Static<typeof UpdateTagBody>;

export const ObjectTypeName = Type.String({ pattern: '^[a-z0-9_]{1,50}$', description: 'object type' });

export const TagObjectsQuery = Type.Object({
  ...pageQuery(TAG_LIST_COUNT),
  type: Type.Optional(ObjectTypeName),
});
export type TagObjectsQuery = Static<typeof TagObjectsQuery>;

export const ListedObject = Type.Object({
  uuid: Uuid,
  type: Type.String(),
  owner: Uuid,
  time: Type.Integer(),
  description: Type.String(),
  status: Type.Optional(Type.String()),
  tag: TagList,
});

export const TagObjectsAnswer = envelope({
  object: Type.Array(ListedObject, { description: 'one page of the objects carrying the tag' }),
});

export const ObjectTagBody = Type.Object({
  add: Type.Optional(Type.Array(Uuid, { maxItems: 100, description: 'tags to put on the object' })),
  delete: Type.Optional(Type.Array(Uuid, { maxItems: 100, description: 'tags to take off the object' })),
});
export type ObjectTagBody = Static<typeof ObjectTagBody>;

export const ObjectTagAnswer = envelope({
  tag: Type.Array(Uuid, { description: 'tags of the object the user may read, afterwards' }),
});
