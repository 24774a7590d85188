/**
 * Queries of the announcement area beyond the object store. One query per function; each takes
 * `db` or a transaction first.
 */
import type { Db } from '../../platform/database/database.js';

/** The owner of an announcement (conversion results carry no user). */
export async function findAnnouncementOwner(db: Db, uuid: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('object')
    .select('owner')
    .where('uuid', '=', uuid)
    .where('type', '=', 'announcement')
    .executeTakeFirst();
  return row?.owner;
}
