/** Storage of the call filters partners set for their users (spec "Partner API"). */
import type { Db } from '../../platform/database/database.js';

export interface CallFilterTable {
  user_uuid: string;
  /** the filter as given, JSON */
  filter: string;
  operators: number;
  updated: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    call_filter: CallFilterTable;
  }
}

export function findFilter(db: Db, userUuid: string): Promise<CallFilterTable | undefined> {
  return db.selectFrom('call_filter').selectAll().where('user_uuid', '=', userUuid).executeTakeFirst();
}

export function insertFilter(db: Db, row: CallFilterTable): Promise<unknown> {
  return db.insertInto('call_filter').values(row).execute();
}

export async function deleteFilter(db: Db, userUuid: string): Promise<boolean> {
  const result = await db.deleteFrom('call_filter').where('user_uuid', '=', userUuid).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
