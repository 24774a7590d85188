/** Storage of partners (resellers), spec "Partner API". One query per function. */
import type { Db } from '../../platform/database/database.js';

export interface PartnerTable {
  uuid: string;
  name: string;
  key_hash: string;
  rights: string;
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    partner: PartnerTable;
  }
}

export function insertPartner(db: Db, row: PartnerTable): Promise<unknown> {
  return db.insertInto('partner').values(row).execute();
}

export function findPartnerByName(db: Db, name: string): Promise<PartnerTable | undefined> {
  return db.selectFrom('partner').selectAll().where('name', '=', name).executeTakeFirst();
}

export function findPartnerByUuid(db: Db, uuid: string): Promise<PartnerTable | undefined> {
  return db.selectFrom('partner').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export function listPartners(db: Db): Promise<PartnerTable[]> {
  return db.selectFrom('partner').selectAll().orderBy('name').execute();
}

export function updatePartner(db: Db, uuid: string, changes: Partial<PartnerTable>): Promise<unknown> {
  return db.updateTable('partner').set(changes).where('uuid', '=', uuid).execute();
}

export async function deletePartner(db: Db, uuid: string): Promise<boolean> {
  const result = await db.deleteFrom('partner').where('uuid', '=', uuid).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
