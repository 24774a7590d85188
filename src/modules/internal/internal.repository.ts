/** Storage of the internal API (spec "Internal API"; migration 0022): jeye reports and MWI URIs. */
import type { Db } from '../../platform/database/database.js';
import { applyPage, type PageQuery } from '../../platform/paging.js';

export interface JeyeTable {
  uuid: string;
  sort_key: string;
  host: string;
  /** seconds since epoch, when the report arrived */
  time: number;
  data: string;
}

export interface MwiTable {
  phone: string;
  uri: string;
  updated: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    jeye: JeyeTable;
    mwi: MwiTable;
  }
}

export async function insertJeye(db: Db, row: JeyeTable): Promise<void> {
  await db.insertInto('jeye').values(row).execute();
}

export async function hostKnown(db: Db, host: string): Promise<boolean> {
  return (
    (await db.selectFrom('jeye').select('uuid').where('host', '=', host).limit(1).executeTakeFirst()) !==
    undefined
  );
}

export async function countHosts(db: Db): Promise<number> {
  const row = await db
    .selectFrom('jeye')
    .select((eb) => eb.fn.count<number>('host').distinct().as('hosts'))
    .executeTakeFirstOrThrow();
  return Number(row.hosts);
}

/** The sort key of the host's `keep`-th newest report. */
export async function jeyeKeepFrom(db: Db, host: string, keep: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('jeye')
    .select('sort_key')
    .where('host', '=', host)
    .orderBy('sort_key', 'desc')
    .offset(keep - 1)
    .limit(1)
    .executeTakeFirst();
  return row?.sort_key;
}

export async function deleteJeyeBefore(db: Db, host: string, sortKey: string): Promise<void> {
  await db.deleteFrom('jeye').where('host', '=', host).where('sort_key', '<', sortKey).execute();
}

export function listJeye(db: Db, host: string, page: PageQuery, count: number): Promise<JeyeTable[]> {
  const query = db.selectFrom('jeye').selectAll().where('host', '=', host);
  return applyPage(query, { ...page, count }, { time: 'time', key: 'sort_key' }, count).execute();
}

export function findMwi(db: Db, phone: string): Promise<MwiTable | undefined> {
  return db.selectFrom('mwi').selectAll().where('phone', '=', phone).executeTakeFirst();
}

export async function upsertMwi(db: Db, row: MwiTable): Promise<void> {
  await db
    .insertInto('mwi')
    .values(row)
    .onConflict((c) => c.column('phone').doUpdateSet({ uri: row.uri, updated: row.updated }))
    .execute();
}

export async function deleteMwi(db: Db, phone: string): Promise<boolean> {
  const result = await db.deleteFrom('mwi').where('phone', '=', phone).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
