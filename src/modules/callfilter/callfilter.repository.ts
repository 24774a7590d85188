/** Storage of the call filters partners set for their users (spec "Partner API"). */
import type { Db } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';

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

/** Compiled once: the call engine asks on every call. */
const filterOf = preparedQuery((db, a: { userUuid: string }) =>
  db.selectFrom('call_filter').selectAll().where('user_uuid', '=', a.userUuid),
);

export function findFilter(db: Db, userUuid: string): Promise<CallFilterTable | undefined> {
  return filterOf.first(db, { userUuid });
}

export function insertFilter(db: Db, row: CallFilterTable): Promise<unknown> {
  return db.insertInto('call_filter').values(row).execute();
}

export async function deleteFilter(db: Db, userUuid: string): Promise<boolean> {
  const result = await db.deleteFrom('call_filter').where('user_uuid', '=', userUuid).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
