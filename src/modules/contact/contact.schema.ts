/** Schemas of spec "Contact": POST/GET /api/contact, GET/POST/DELETE /api/contact/{uuid}. */
import { type Static, Type } from 'typebox';
import { Email, Name, Phone, Uuid } from '../../platform/formats.js';
import { DeleteQuery, ObjectParams, TagList, UUID_PATTERN } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

export const CONTACT_LIST_COUNT = { default: 100, max: 1000 };

const Scope = Type.Union([Type.Literal('private'), Type.Literal('business')], {
  description: 'default private',
});
const Text100 = Type.String({ pattern: '^.{0,100}$' });

/** An entry as created: the value's format depends on the type; key only for type other. */
export const NewEntry = Type.Union([
  Type.Object({
    type: Type.Union([Type.Literal('phone'), Type.Literal('mobile'), Type.Literal('fax')]),
    scope: Type.Optional(Scope),
    value: Phone,
  }),
  Type.Object({ type: Type.Literal('email'), scope: Type.Optional(Scope), value: Email }),
  Type.Object({ type: Type.Literal('address'), scope: Type.Optional(Scope), value: Text100 }),
  Type.Object({
    type: Type.Literal('other'),
    scope: Type.Optional(Scope),
    key: Type.Optional(Text100),
    value: Text100,
  }),
]);
export type NewEntry = Static<typeof NewEntry>;

const EntryType = Type.Union(
  ['phone', 'mobile', 'fax', 'email', 'address', 'other'].map((type) => Type.Literal(type)),
);

/** A change to an entry: the merged entry must again satisfy the entry formats. */
const EntryChange = Type.Object({
  type: Type.Optional(EntryType),
  scope: Type.Optional(Scope),
  key: Type.Optional(Text100),
  value: Type.Optional(Type.String({ maxLength: 254 })),
});

export const Entry = named(
  'ContactEntry',
  Type.Object({
    type: Type.String(),
    scope: Type.String(),
    key: Type.Optional(Type.String()),
    value: Type.String(),
  }),
);
export type Entry = Static<typeof Entry>;

export const ContactObject = named(
  'Contact',
  Type.Object({
    owner: Uuid,
    time: Type.Integer(),
    firstname: Type.String(),
    lastname: Type.String(),
    tag: TagList,
    entry: Type.Record(Type.String(), Entry, { description: 'entries keyed by entry UUID' }),
  }),
);
export type ContactObject = Static<typeof ContactObject>;

export const CreateContactBody = Type.Object({ firstname: Name, lastname: Name });
export type CreateContactBody = Static<typeof CreateContactBody>;

export const ListContactsQuery = Type.Object(pageQuery(CONTACT_LIST_COUNT));
export type ListContactsQuery = Static<typeof ListContactsQuery>;

export const ListContactsAnswer = envelope({
  contact: Type.Record(Type.String(), ContactObject, {
    description: "one page of the user's own contacts (not in the trash), keyed by UUID, in time order",
  }),
});

export const ContactParams = ObjectParams;

export const GetContactAnswer = envelope({ contact: ContactObject });

export const UpdateContactBody = Type.Object({
  firstname: Type.Optional(Name),
  lastname: Type.Optional(Name),
  create: Type.Optional(Type.Array(NewEntry, { maxItems: 1000 })),
  update: Type.Optional(
    Type.Record(Type.String({ pattern: UUID_PATTERN }), EntryChange, {
      additionalProperties: false,
      description: 'entry UUID -> the fields to change',
    }),
  ),
  delete: Type.Optional(Type.Array(Uuid, { maxItems: 1000 })),
});
export type UpdateContactBody = Static<typeof UpdateContactBody>;

export const UpdateContactAnswer = envelope({
  create: Type.Array(Uuid, { description: 'UUIDs of the new entries, in the order given' }),
});

export const DeleteContactQuery = DeleteQuery;
