/** Storage of iOS push application ids and their APNs credentials (spec "Push registration"). */
import type { Db } from '../../platform/database/database.js';

export interface PushApplicationTable {
  application_id: string;
  team_id: string;
  key_id: string;
  /** PKCS#8 PEM of the APNs signing key (.p8), sealed (src/platform/sealing.ts) */
  private_key: string;
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    push_application: PushApplicationTable;
  }
}

export function insertApplication(db: Db, row: PushApplicationTable): Promise<unknown> {
  return db.insertInto('push_application').values(row).execute();
}

export function findApplication(db: Db, applicationId: string): Promise<PushApplicationTable | undefined> {
  return db
    .selectFrom('push_application')
    .selectAll()
    .where('application_id', '=', applicationId)
    .executeTakeFirst();
}

/** Every application id, without the private keys. */
export function listApplications(db: Db): Promise<Omit<PushApplicationTable, 'private_key'>[]> {
  return db
    .selectFrom('push_application')
    .select(['application_id', 'team_id', 'key_id', 'created'])
    .orderBy('application_id')
    .execute();
}

export async function deleteApplication(db: Db, applicationId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('push_application')
    .where('application_id', '=', applicationId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Rows whose key is still stored in clear (from before keys were sealed). */
export function listClearKeys(
  db: Db,
): Promise<Pick<PushApplicationTable, 'application_id' | 'private_key'>[]> {
  return db
    .selectFrom('push_application')
    .select(['application_id', 'private_key'])
    .where('private_key', 'not like', 'sealed:%')
    .execute();
}

/** Replaces a stored key if it is still `from`. */
export function replaceKey(db: Db, applicationId: string, from: string, to: string): Promise<unknown> {
  return db
    .updateTable('push_application')
    .set({ private_key: to })
    .where('application_id', '=', applicationId)
    .where('private_key', '=', from)
    .execute();
}
