/** Storage of hardware codes for sign-up (spec POST /api/signup/verification). Only hashes. */
import type { Db } from '../../platform/database/database.js';

export interface HardwareCodeTable {
  code_hash: string;
  uuid: string;
  label: string;
  uses: number;
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    hardware_code: HardwareCodeTable;
  }
}

export function insertCode(db: Db, row: HardwareCodeTable): Promise<unknown> {
  return db.insertInto('hardware_code').values(row).execute();
}

export function findCodeByHash(db: Db, codeHash: string): Promise<HardwareCodeTable | undefined> {
  return db.selectFrom('hardware_code').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

export function findCodeByUuid(db: Db, uuid: string): Promise<HardwareCodeTable | undefined> {
  return db.selectFrom('hardware_code').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export function listCodes(db: Db): Promise<HardwareCodeTable[]> {
  return db.selectFrom('hardware_code').selectAll().orderBy('created').orderBy('label').execute();
}

export async function deleteCodeByHash(db: Db, codeHash: string): Promise<boolean> {
  const result = await db.deleteFrom('hardware_code').where('code_hash', '=', codeHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Counts one use unless the code has reached `limit`; false when nothing was counted. One
 * conditional update, so that concurrent sign-ups cannot both take the last use.
 */
export async function countCodeUse(db: Db, codeHash: string, limit: number): Promise<boolean> {
  const result = await db
    .updateTable('hardware_code')
    .set((eb) => ({ uses: eb('uses', '+', 1) }))
    .where('code_hash', '=', codeHash)
    .where('uses', '<', limit)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
