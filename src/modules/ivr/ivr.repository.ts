/** Storage of IVRs (spec "IVR"): the checked body as JSON. One query per function. */
import type { Db } from '../../platform/database/database.js';
import { applyPage, type PageQuery } from '../../platform/paging.js';

export interface IvrTable {
  uuid: string;
  owner: string;
  description: string;
  /** JSON of the IVR body */
  body: string;
  time: number;
  sort_key: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    ivr: IvrTable;
  }
}

export function insertIvr(db: Db, row: IvrTable): Promise<unknown> {
  return db.insertInto('ivr').values(row).execute();
}

export function findOwnIvr(db: Db, owner: string, uuid: string): Promise<IvrTable | undefined> {
  return db
    .selectFrom('ivr')
    .selectAll()
    .where('uuid', '=', uuid)
    .where('owner', '=', owner)
    .executeTakeFirst();
}

/** Which of `uuids` are IVRs of `owner`. */
export async function findOwnIvrUuids(db: Db, owner: string, uuids: string[]): Promise<string[]> {
  if (uuids.length === 0) return [];
  const rows = await db
    .selectFrom('ivr')
    .select('uuid')
    .where('owner', '=', owner)
    .where('uuid', 'in', uuids)
    .execute();
  return rows.map((row) => row.uuid);
}

export function listAllIvrs(db: Db, owner: string): Promise<Pick<IvrTable, 'uuid' | 'body'>[]> {
  return db.selectFrom('ivr').select(['uuid', 'body']).where('owner', '=', owner).execute();
}

export async function countIvrs(db: Db, owner: string): Promise<number> {
  const row = await db
    .selectFrom('ivr')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner', '=', owner)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function pageIvrs(db: Db, owner: string, page: PageQuery, defaultCount: number) {
  return applyPage(
    db.selectFrom('ivr').select(['uuid', 'description']).where('owner', '=', owner),
    page,
    { time: 'time', key: 'sort_key' },
    defaultCount,
  ).execute();
}

export function updateIvr(
  db: Db,
  uuid: string,
  changes: Pick<IvrTable, 'description' | 'body'>,
): Promise<unknown> {
  return db.updateTable('ivr').set(changes).where('uuid', '=', uuid).execute();
}

export function deleteIvr(db: Db, uuid: string): Promise<unknown> {
  return db.deleteFrom('ivr').where('uuid', '=', uuid).execute();
}
