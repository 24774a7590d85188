/**
 * Storage of the object store (decisions.md "Objects and tags"). One query per function; every
 * function takes `db` or a transaction first.
 */
import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { preparedQuery } from '../database/prepared.js';
import { applyPage, type PageQuery } from '../paging.js';

export interface ObjectTable {
  uuid: string;
  type: string;
  owner: string;
  time: number;
  sort_key: string;
  modified: number;
  description: string;
  status: string | null;
  /** A type's own sub-classification (the client's type name of an xobject). */
  subtype: string | null;
  /** The type's own fields, JSON text. */
  data: string;
  /** Bytes the object takes: description, data and content files. */
  volume: number;
  /** Bytes stored with the object beside it: its metadata, comments and chat messages. */
  attached_volume: number;
  trashed: number;
}

/** `object`: held by one object for its own access rules (a chat's participants). */
export type TagKind = 'system' | 'share' | 'custom' | 'object';

export interface TagTable {
  uuid: string;
  owner: string;
  kind: TagKind;
  name: string | null;
  label: string;
  foreign_use: number;
  time: number;
  sort_key: string;
}

export interface TagPolicyTable {
  tag: string;
  user_uuid: string;
  level: number;
  grant_level: number;
}

export interface ObjectTagTable {
  object: string;
  tag: string;
  /** Who put the tag on the object; the tag stays only while that user may keep it there. */
  user_uuid: string;
  sort_key: string;
  time: number;
  type: string;
}

declare module '../database/database.js' {
  interface Tables {
    object: ObjectTable;
    tag: TagTable;
    tag_policy: TagPolicyTable;
    object_tag: ObjectTagTable;
  }
}

export type ObjectRow = ObjectTable;
export type TagRow = TagTable;

// ---- objects ----

export function insertObject(db: Db, row: ObjectRow): Promise<unknown> {
  return objectInsert.run(db, row);
}

/** Compiled once per row layout (which fields are null): every object created runs it. */
const objectInsert = preparedQuery((db, row: ObjectRow) => db.insertInto('object').values(row));

export function findObject(db: Db, uuid: string): Promise<ObjectRow | undefined> {
  return db.selectFrom('object').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

/**
 * The object and the highest access any of its tags grants the user, in one query: the access
 * check of every object call. Inside a write the object row is locked (FOR UPDATE) until the
 * commit, so that concurrent writes to one object serialise: a call that waited for a delete
 * finds no object and answers its wrong-... status. SQLite has one writer at
 * a time and drops the clause (src/db/dialect/sqlite.ts).
 */
export function findObjectWithGrant(
  db: Db,
  uuid: string,
  user: string,
): Promise<(ObjectRow & { grant_level: number | null }) | undefined> {
  return objectWithGrant.first(db, { uuid, user, locked: db.isTransaction }) as Promise<
    (ObjectRow & { grant_level: number | null }) | undefined
  >;
}

/** Compiled once: every access check runs it (the call engine's announcements on every call). */
const objectWithGrant = preparedQuery((db, a: { uuid: string; user: string; locked: boolean }) =>
  db
    .selectFrom('object as o')
    .selectAll('o')
    .select((eb) =>
      eb
        .selectFrom('object_tag as ot')
        .innerJoin('tag_policy as tp', (join) =>
          join.onRef('tp.tag', '=', 'ot.tag').on('tp.user_uuid', '=', a.user),
        )
        .whereRef('ot.object', '=', 'o.uuid')
        .select((e) => e.fn.max('tp.grant_level').as('g'))
        .as('grant_level'),
    )
    .where('o.uuid', '=', a.uuid)
    .$if(a.locked, (query) => query.forUpdate('o')),
);

/** The object row's columns, listed (not `*`) so that both branches of a union keep their shape. */
const OBJECT_COLUMNS = [
  'uuid',
  'type',
  'owner',
  'time',
  'sort_key',
  'modified',
  'description',
  'status',
  'subtype',
  'data',
  'volume',
  'attached_volume',
  'trashed',
] as const satisfies readonly (keyof ObjectRow)[];

/** One row of `findObjectForViewer`: the object (visible_tag null) or one tag the viewer sees on it. */
export type ObjectOrTagRow =
  | (ObjectRow & { grant_level: number | null; visible_tag: null })
  | ({ [K in keyof ObjectRow]: null } & { grant_level: null; visible_tag: string });

/**
 * A read of one object for one user in one statement (one round trip on PostgreSQL): the object
 * with the user's highest grant, as findObjectWithGrant, and after it one row per tag on it
 * the user may read (as listVisibleTags). Plain SQL: a UNION ALL both databases take alike.
 * The tags' branch is a CROSS JOIN, which SQLite keeps in the written order: from the object's
 * few tags to each one's policy by its key, not from every policy of the reader (a user holds
 * one per tag it owns or was shared), which SQLite's planner chose without table statistics
 * (docs/query-plans.md). PostgreSQL plans a CROSS JOIN with a WHERE as the inner join it is.
 */
export function findObjectForViewer(db: Db, uuid: string, user: string): Promise<ObjectOrTagRow[]> {
  return objectForViewer.all(db, { uuid, user });
}

/** Compiled once: every GET of one object runs it. */
const objectForViewer = preparedQuery((_db, a: { uuid: string; user: string }) => {
  const columns = sql.join(OBJECT_COLUMNS.map((column) => sql.ref(`o.${column}`)));
  const nulls = sql.join(OBJECT_COLUMNS.map(() => sql`null`));
  return sql<ObjectOrTagRow>`select ${columns},
      (select max(tp.grant_level) from object_tag as ot inner join tag_policy as tp
        on tp.tag = ot.tag and tp.user_uuid = ${a.user} where ot.object = o.uuid) as grant_level,
      null as visible_tag
    from object as o where o.uuid = ${a.uuid}
    union all
    select ${nulls}, null, ot.tag from object_tag as ot cross join tag_policy as tp
    where tp.tag = ot.tag and ot.object = ${a.uuid} and tp.user_uuid = ${a.user} and tp.level > 0`;
});

/** The fields an object update sets (all of them, whatever changed: one compiled statement). */
export type ObjectUpdate = Pick<ObjectRow, 'description' | 'data' | 'volume' | 'status' | 'modified'>;

/** An object's fields after a change of its content (objects.ts updateObject). */
export function updateObjectFields(db: Db, uuid: string, changes: ObjectUpdate): Promise<unknown> {
  return objectUpdate.run(db, { uuid, ...changes });
}

/** Other changes of an object row (trash and restore, ...). */
export function updateObject(db: Db, uuid: string, changes: Partial<ObjectRow>): Promise<unknown> {
  return db.updateTable('object').set(changes).where('uuid', '=', uuid).execute();
}

/** Compiled once (per status null or not): every object write runs it. */
const objectUpdate = preparedQuery((db, a: ObjectUpdate & { uuid: string }) =>
  db
    .updateTable('object')
    .set({
      description: a.description,
      data: a.data,
      volume: a.volume,
      status: a.status,
      modified: a.modified,
    })
    .where('uuid', '=', a.uuid),
);

export function deleteObject(db: Db, uuid: string): Promise<unknown> {
  return db.deleteFrom('object').where('uuid', '=', uuid).execute();
}

/** Objects a user owns of one type, paged by time (the type's own list calls). */
export function listOwnObjects(
  db: Db,
  owner: string,
  type: string,
  subtype: string | undefined,
  page: PageQuery,
  defaultCount: number,
): Promise<ObjectRow[]> {
  let query = db
    .selectFrom('object')
    .selectAll()
    .where('owner', '=', owner)
    .where('type', '=', type)
    .where('trashed', '=', 0);
  if (subtype !== undefined) query = query.where('subtype', '=', subtype);
  return applyPage(query, page, { time: 'time', key: 'sort_key' }, defaultCount).execute();
}

export function listOwnedObjects(db: Db, owner: string): Promise<ObjectRow[]> {
  return db.selectFrom('object').selectAll().where('owner', '=', owner).execute();
}

export function listTrashedObjects(db: Db, owner: string): Promise<ObjectRow[]> {
  return db.selectFrom('object').selectAll().where('owner', '=', owner).where('trashed', '=', 1).execute();
}

/** Adds `delta` (negative to free) to the bytes stored with an object. */
export function addAttachedVolume(db: Db, uuid: string, delta: number): Promise<unknown> {
  return db
    .updateTable('object')
    .set((eb) => ({ attached_volume: eb('attached_volume', '+', delta) }))
    .where('uuid', '=', uuid)
    .execute();
}

// ---- tags ----

export function insertTag(db: Db, row: TagRow): Promise<unknown> {
  return db.insertInto('tag').values(row).execute();
}

export function insertTags(db: Db, rows: TagRow[]): Promise<unknown> {
  return db.insertInto('tag').values(rows).execute();
}

/** How many tags of one kind a user owns. */
export async function countTags(db: Db, owner: string, kind: TagKind): Promise<number> {
  const row = await db
    .selectFrom('tag')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('owner', '=', owner)
    .where('kind', '=', kind)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export function findTag(db: Db, uuid: string): Promise<TagRow | undefined> {
  return db.selectFrom('tag').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export function findTags(db: Db, uuids: readonly string[]): Promise<TagRow[]> {
  if (uuids.length === 0) return Promise.resolve([]);
  return db.selectFrom('tag').selectAll().where('uuid', 'in', uuids).execute();
}

/** The system and share tags of users, by name. */
export function findNamedTags(
  db: Db,
  owners: readonly string[],
  names: readonly string[],
): Promise<TagRow[]> {
  if (owners.length === 0 || names.length === 0) return Promise.resolve([]);
  return namedTags.all(db, { owners, names });
}

/** Compiled once per list lengths: every object created runs it (its system tags). */
const namedTags = preparedQuery((db, a: { owners: readonly string[]; names: readonly string[] }) =>
  db.selectFrom('tag').selectAll().where('owner', 'in', a.owners).where('name', 'in', a.names),
);

export function updateTag(db: Db, uuid: string, changes: Partial<TagRow>): Promise<unknown> {
  return db.updateTable('tag').set(changes).where('uuid', '=', uuid).execute();
}

export function deleteTag(db: Db, uuid: string): Promise<unknown> {
  return db.deleteFrom('tag').where('uuid', '=', uuid).execute();
}

/** Tags a user may read (owner or in the policy), with the user's level on each. */
export function listReadableTags(db: Db, user: string): Promise<(TagRow & { level: number })[]> {
  return db
    .selectFrom('tag_policy as tp')
    .innerJoin('tag as t', 't.uuid', 'tp.tag')
    .selectAll('t')
    .select('tp.level')
    .where('tp.user_uuid', '=', user)
    .where('tp.level', '>', 0)
    .orderBy('t.sort_key')
    .execute();
}

// ---- policies ----

export function insertPolicies(db: Db, rows: TagPolicyTable[]): Promise<unknown> {
  if (rows.length === 0) return Promise.resolve();
  return db
    .insertInto('tag_policy')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['tag', 'user_uuid']).doUpdateSet((eb) => ({
        level: eb.ref('excluded.level'),
        grant_level: eb.ref('excluded.grant_level'),
      })),
    )
    .execute();
}

export function deletePolicies(db: Db, tag: string, users: readonly string[]): Promise<unknown> {
  if (users.length === 0) return Promise.resolve();
  return db.deleteFrom('tag_policy').where('tag', '=', tag).where('user_uuid', 'in', users).execute();
}

export function listPolicies(db: Db, tags: readonly string[]): Promise<TagPolicyTable[]> {
  if (tags.length === 0) return Promise.resolve([]);
  return db.selectFrom('tag_policy').selectAll().where('tag', 'in', tags).execute();
}

export function findPolicy(db: Db, tag: string, user: string): Promise<TagPolicyTable | undefined> {
  return db
    .selectFrom('tag_policy')
    .selectAll()
    .where('tag', '=', tag)
    .where('user_uuid', '=', user)
    .executeTakeFirst();
}

/** The tag's owner row grants access only on tags open to foreign use. */
export function setOwnerGrant(db: Db, tag: string, owner: string, grant: number): Promise<unknown> {
  return db
    .updateTable('tag_policy')
    .set({ grant_level: grant })
    .where('tag', '=', tag)
    .where('user_uuid', '=', owner)
    .execute();
}

/** Removes a user from every policy of tags owned by `owner` (user links ended). */
export function deleteUserFromPoliciesOf(db: Db, owner: string, user: string): Promise<unknown> {
  return db
    .deleteFrom('tag_policy')
    .where('user_uuid', '=', user)
    .where('tag', 'in', (eb) => eb.selectFrom('tag').select('uuid').where('owner', '=', owner))
    .execute();
}

/** Tags owned by `owner` whose policy names `user`. */
export function listTagsNaming(db: Db, owner: string, user: string): Promise<TagRow[]> {
  return db
    .selectFrom('tag as t')
    .innerJoin('tag_policy as tp', 'tp.tag', 't.uuid')
    .selectAll('t')
    .where('t.owner', '=', owner)
    .where('tp.user_uuid', '=', user)
    .execute();
}

// ---- tags on objects ----

/** Every tag on an object with its policy rows: what the access of all users derives from. */
export function listObjectGrants(
  db: Db,
  object: string,
): Promise<
  {
    tag: string;
    attacher: string;
    tag_owner: string;
    name: string | null;
    foreign_use: number;
    policy_user: string;
    level: number;
    grant_level: number;
  }[]
> {
  return objectGrants.all(db, { object });
}

/** Compiled once: every write of an object runs it (who gets the object's events). */
const objectGrants = preparedQuery((db, a: { object: string }) =>
  db
    .selectFrom('object_tag as ot')
    .innerJoin('tag as t', 't.uuid', 'ot.tag')
    .innerJoin('tag_policy as tp', 'tp.tag', 'ot.tag')
    .select([
      'ot.tag',
      'ot.user_uuid as attacher',
      't.owner as tag_owner',
      't.name',
      't.foreign_use',
      'tp.user_uuid as policy_user',
      'tp.level',
      'tp.grant_level',
    ])
    .where('ot.object', '=', a.object),
);

/** Tags on one object: `tags[i]` put there by `attachers[i]`; a tag already there stays as it is. */
export interface ObjectTagsInsert {
  object: string;
  tags: readonly string[];
  attachers: readonly string[];
  sort_key: string;
  time: number;
  type: string;
}

export function insertObjectTags(db: Db, rows: ObjectTagsInsert): Promise<unknown> {
  if (rows.tags.length === 0) return Promise.resolve();
  return objectTagsInsert.run(db, rows);
}

/** Compiled once per number of tags: every object created runs it. */
const objectTagsInsert = preparedQuery((db, a: ObjectTagsInsert) =>
  db
    .insertInto('object_tag')
    .values(
      a.tags.map((tag, index) => ({
        object: a.object,
        tag,
        user_uuid: a.attachers[index] as string,
        sort_key: a.sort_key,
        time: a.time,
        type: a.type,
      })),
    )
    .onConflict((oc) => oc.columns(['object', 'tag']).doNothing()),
);

export function deleteObjectTags(db: Db, object: string, tags: readonly string[]): Promise<unknown> {
  if (tags.length === 0) return Promise.resolve();
  return db.deleteFrom('object_tag').where('object', '=', object).where('tag', 'in', tags).execute();
}

export function listObjectTagUuids(db: Db, object: string): Promise<{ tag: string; user_uuid: string }[]> {
  return db.selectFrom('object_tag').select(['tag', 'user_uuid']).where('object', '=', object).execute();
}

/** For each (object, user): the object's tags that user may read. */
export function listVisibleTags(
  db: Db,
  objects: readonly string[],
  users: readonly string[],
): Promise<{ object: string; tag: string; user_uuid: string }[]> {
  if (objects.length === 0 || users.length === 0) return Promise.resolve([]);
  return visibleTags.all(db, { objects, users });
}

/**
 * Compiled once per list lengths: every object answer (GET, listings, events) runs it. A CROSS
 * JOIN, as findObjectForViewer's tags' branch: SQLite keeps the written order, from the objects'
 * tags to each one's policy by its key (tag, user), not from every policy of the users (one per
 * tag a user owns or was shared: a reader holding 1,000 tags paid for all of them on a listing).
 * PostgreSQL plans it as the inner join it is (docs/query-plans.md).
 */
const visibleTags = preparedQuery((db, a: { objects: readonly string[]; users: readonly string[] }) =>
  db
    .selectFrom('object_tag as ot')
    .crossJoin('tag_policy as tp')
    .whereRef('tp.tag', '=', 'ot.tag')
    .select(['ot.object', 'ot.tag', 'tp.user_uuid'])
    .where('ot.object', 'in', a.objects)
    .where('tp.user_uuid', 'in', a.users)
    .where('tp.level', '>', 0)
    .orderBy('ot.object')
    .orderBy('ot.tag'),
);

/** Uuids of the objects that carry a tag (for policy changes that touch them all). */
export async function listTaggedObjectUuids(db: Db, tag: string): Promise<string[]> {
  const rows = await db.selectFrom('object_tag').select('object').where('tag', '=', tag).execute();
  return rows.map((row) => row.object);
}

/** Objects carrying any tag of `owner` put there by `attacher`. */
export async function listObjectsTaggedBy(db: Db, owner: string, attacher: string): Promise<string[]> {
  const rows = await db
    .selectFrom('object_tag as ot')
    .innerJoin('tag as t', 't.uuid', 'ot.tag')
    .select('ot.object')
    .distinct()
    .where('t.owner', '=', owner)
    .where('ot.user_uuid', '=', attacher)
    .execute();
  return rows.map((row) => row.object);
}

export interface ListedObject {
  uuid: string;
  type: string;
  owner: string;
  time: number;
  description: string;
  status: string | null;
}

/**
 * One page of a tag's objects, newest or oldest first by the object's UUID time. Trashed
 * objects are listed only to their owner.
 */
export function listTagObjects(
  db: Db,
  tag: string,
  viewer: string,
  page: PageQuery,
  type: string | undefined,
  defaultCount: number,
): Promise<ListedObject[]> {
  let query = db
    .selectFrom('object_tag as ot')
    .innerJoin('object as o', 'o.uuid', 'ot.object')
    .select(['o.uuid', 'o.type', 'o.owner', 'o.time', 'o.description', 'o.status'])
    .where('ot.tag', '=', tag)
    .where((eb) => eb.or([eb('o.trashed', '=', 0), eb('o.owner', '=', viewer)]));
  if (type !== undefined) query = query.where('ot.type', '=', type);
  return applyPage(query, page, { time: 'ot.time', key: 'ot.sort_key' }, defaultCount).execute();
}

// ---- user links (decisions.md "Sharing") ----

export interface UserLinkTable {
  user_uuid: string;
  other_uuid: string;
  time: number;
}

declare module '../database/database.js' {
  interface Tables {
    user_link: UserLinkTable;
  }
}

/** Stores the link in both directions. */
export function insertUserLink(db: Db, a: string, b: string, time: number): Promise<unknown> {
  return db
    .insertInto('user_link')
    .values([
      { user_uuid: a, other_uuid: b, time },
      { user_uuid: b, other_uuid: a, time },
    ])
    .execute();
}

export function deleteUserLink(db: Db, a: string, b: string): Promise<unknown> {
  return db
    .deleteFrom('user_link')
    .where((eb) =>
      eb.or([
        eb.and([eb('user_uuid', '=', a), eb('other_uuid', '=', b)]),
        eb.and([eb('user_uuid', '=', b), eb('other_uuid', '=', a)]),
      ]),
    )
    .execute();
}

export function listUserLinks(db: Db, user: string, others?: readonly string[]): Promise<UserLinkTable[]> {
  let query = db.selectFrom('user_link').selectAll().where('user_uuid', '=', user);
  if (others !== undefined) {
    if (others.length === 0) return Promise.resolve([]);
    query = query.where('other_uuid', 'in', others);
  }
  return query.orderBy('time').orderBy('other_uuid').execute();
}

/** Objects created in [from, to) (seconds) per type, trashed ones included (internal statistics). */
export function countCreatedObjects(db: Db, from: number, to: number) {
  return db
    .selectFrom('object')
    .select((eb) => ['type', eb.fn.countAll<number>().as('count')])
    .where('time', '>=', from)
    .where('time', '<', to)
    .groupBy('type')
    .execute();
}
