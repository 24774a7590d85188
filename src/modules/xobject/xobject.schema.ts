/**
 * Schemas of the /api/xobject family (listed in the spec without shapes): objects a client
 * defines itself, a type name of its choice and a JSON body, kept in the object store.
 */
import { type Static, Type } from 'typebox';
import { Description, Uuid } from '../../platform/formats.js';
import { DeleteQuery, ObjectParams, TagList } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

export const XOBJECT_LIST_COUNT = { default: 50, max: 500 };
/** Largest `data`, as JSON text (too-large beyond). */
export const XOBJECT_DATA_MAX = 100 * 1024;

const XType = Type.String({
  pattern: '^[a-zA-Z0-9_.-]{1,50}$',
  description: "the client's own type name, e.g. com.example.note",
});
const Data = Type.Unknown({ description: 'any JSON value, at most 100 KB as JSON text' });

export { DeleteQuery, ObjectParams };

export const CreateXObjectBody = Type.Object({
  xtype: XType,
  description: Type.Optional(Description),
  data: Data,
});
export type CreateXObjectBody = Static<typeof CreateXObjectBody>;

export const UpdateXObjectBody = Type.Object({
  description: Type.Optional(Description),
  data: Type.Optional(Data),
});
export type UpdateXObjectBody = Static<typeof UpdateXObjectBody>;

export const XObject = named(
  'XObject',
  Type.Object({
    owner: Uuid,
    time: Type.Integer(),
    modified: Type.Integer({ description: 'time of the last change' }),
    description: Type.String(),
    xtype: Type.String(),
    data: Data,
    tag: TagList,
  }),
);
export type XObject = Static<typeof XObject>;

export const GetXObjectAnswer = envelope({ xobject: XObject });

export const ListXObjectsQuery = Type.Object({
  ...pageQuery(XOBJECT_LIST_COUNT),
  xtype: Type.Optional(XType),
});
export type ListXObjectsQuery = Static<typeof ListXObjectsQuery>;

export const ListXObjectsAnswer = envelope({
  xobject: Type.Record(Type.String(), XObject, {
    description: "one page of the user's own xobjects (not in the trash), keyed by UUID, in time order",
  }),
});
