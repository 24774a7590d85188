/** Storage of comments, links and metadata of objects, and of user metadata. One query per function. */
import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../platform/database/database.js';
import { applyPage, type PageQuery } from '../../platform/paging.js';

export interface CommentTable {
  uuid: string;
  object: string;
  owner: string;
  text: string;
  time: number;
  sort_key: string;
  modified: number;
}

export interface ObjectLinkTable {
  object_a: string;
  object_b: string;
  user_uuid: string;
  time: number;
}

export interface ObjectMetadataTable {
  object: string;
  key: string;
  value: string;
}

export interface UserMetadataTable {
  user_uuid: string;
  key: string;
  value: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    comment: CommentTable;
    object_link: ObjectLinkTable;
    object_metadata: ObjectMetadataTable;
    user_metadata: UserMetadataTable;
  }
}

// ---- comments ----

export function insertComment(db: Db, row: CommentTable): Promise<unknown> {
  return db.insertInto('comment').values(row).execute();
}

export function findComment(db: Db, uuid: string): Promise<CommentTable | undefined> {
  return db.selectFrom('comment').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export function updateComment(db: Db, uuid: string, text: string, modified: number): Promise<unknown> {
  return db.updateTable('comment').set({ text, modified }).where('uuid', '=', uuid).execute();
}

export function deleteComment(db: Db, uuid: string): Promise<unknown> {
  return db.deleteFrom('comment').where('uuid', '=', uuid).execute();
}

export function listComments(
  db: Db,
  object: string,
  page: PageQuery,
  defaultCount: number,
): Promise<CommentTable[]> {
  const query = db.selectFrom('comment').selectAll().where('object', '=', object);
  return applyPage(query, page, { time: 'time', key: 'sort_key' }, defaultCount).execute();
}

// ---- links ----

/** A link is stored once with the smaller UUID first. */
export function ordered(a: string, b: string): [string, string] {
  return a < b ? [a, b] : [b, a];
}

export function insertLink(db: Db, row: ObjectLinkTable): Promise<unknown> {
  return db
    .insertInto('object_link')
    .values(row)
    .onConflict((oc) => oc.columns(['object_a', 'object_b']).doNothing())
    .execute();
}

export async function findLink(db: Db, a: string, b: string): Promise<boolean> {
  const [first, second] = ordered(a, b);
  const row = await db
    .selectFrom('object_link')
    .select('time')
    .where('object_a', '=', first)
    .where('object_b', '=', second)
    .executeTakeFirst();
  return row !== undefined;
}

/** How many links the object has (either end). */
export async function countLinks(db: Db, object: string): Promise<number> {
  const row = await db
    .selectFrom('object_link')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where((eb) => eb.or([eb('object_a', '=', object), eb('object_b', '=', object)]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function deleteLink(db: Db, a: string, b: string): Promise<unknown> {
  const [first, second] = ordered(a, b);
  return db.deleteFrom('object_link').where('object_a', '=', first).where('object_b', '=', second).execute();
}

/** The objects linked with an object, with their types. */
export function listLinked(db: Db, object: string): Promise<{ uuid: string; type: string }[]> {
  return db
    .selectFrom('object_link as l')
    .innerJoin('object as o', (join) =>
      join.on((eb) =>
        eb.or([
          eb.and([eb('l.object_a', '=', object), eb('o.uuid', '=', eb.ref('l.object_b'))]),
          eb.and([eb('l.object_b', '=', object), eb('o.uuid', '=', eb.ref('l.object_a'))]),
        ]),
      ),
    )
    .select(['o.uuid', 'o.type'])
    .where((eb) => eb.or([eb('l.object_a', '=', object), eb('l.object_b', '=', object)]))
    .orderBy('l.time')
    .execute();
}

// ---- metadata ----

export interface MetadataSelection {
  keys?: readonly string[];
  /** Keys below this domain (not the domain key itself). */
  domain?: string;
}

/** The keys a metadata read selects: the listed ones and those below the domain (or all). */
function selectedKeys(selection: MetadataSelection): RawBuilder<boolean> | undefined {
  const parts: RawBuilder<boolean>[] = [];
  if (selection.keys !== undefined && selection.keys.length > 0) {
    parts.push(sql<boolean>`${sql.ref('key')} in (${sql.join(selection.keys)})`);
  }
  // Keys hold only [a-z0-9.], so the domain has no LIKE wildcards in it.
  if (selection.domain !== undefined)
    parts.push(sql<boolean>`${sql.ref('key')} like ${`${selection.domain}.%`}`);
  return parts.length === 0 ? undefined : sql<boolean>`(${sql.join(parts, sql` or `)})`;
}

export function listObjectMetadata(
  db: Db,
  object: string,
  selection: MetadataSelection,
): Promise<{ key: string; value: string }[]> {
  let query = db.selectFrom('object_metadata').select(['key', 'value']).where('object', '=', object);
  const filter = selectedKeys(selection);
  if (filter) query = query.where(filter);
  return query.orderBy('key').execute();
}

export function upsertObjectMetadata(db: Db, rows: ObjectMetadataTable[]): Promise<unknown> {
  if (rows.length === 0) return Promise.resolve();
  return db
    .insertInto('object_metadata')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['object', 'key']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })),
    )
    .execute();
}

export function deleteObjectMetadata(db: Db, object: string, keys: readonly string[]): Promise<unknown> {
  if (keys.length === 0) return Promise.resolve();
  return db.deleteFrom('object_metadata').where('object', '=', object).where('key', 'in', keys).execute();
}

export function listUserMetadata(
  db: Db,
  user: string,
  selection: MetadataSelection,
): Promise<{ key: string; value: string }[]> {
  let query = db.selectFrom('user_metadata').select(['key', 'value']).where('user_uuid', '=', user);
  const filter = selectedKeys(selection);
  if (filter) query = query.where(filter);
  return query.orderBy('key').execute();
}

export function upsertUserMetadata(db: Db, rows: UserMetadataTable[]): Promise<unknown> {
  if (rows.length === 0) return Promise.resolve();
  return db
    .insertInto('user_metadata')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['user_uuid', 'key']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })),
    )
    .execute();
}

export function deleteUserMetadata(db: Db, user: string, keys: readonly string[]): Promise<unknown> {
  if (keys.length === 0) return Promise.resolve();
  return db.deleteFrom('user_metadata').where('user_uuid', '=', user).where('key', 'in', keys).execute();
}
