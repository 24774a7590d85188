/** Storage of the sessions' event filters (spec "Events": POST/DELETE /api/event/filter). */
import type { Db } from '../../platform/database/database.js';

export interface EventFilterTable {
  did: string;
  /** JSON array of event names. */
  names: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    event_filter: EventFilterTable;
  }
}

export async function upsertFilter(db: Db, row: EventFilterTable): Promise<void> {
  await db
    .insertInto('event_filter')
    .values(row)
    .onConflict((c) => c.column('did').doUpdateSet({ names: row.names }))
    .execute();
}

export async function deleteFilter(db: Db, did: string): Promise<void> {
  await db.deleteFrom('event_filter').where('did', '=', did).execute();
}

export function listFilters(db: Db): Promise<EventFilterTable[]> {
  return db.selectFrom('event_filter').selectAll().execute();
}

/** Filters of sessions that ended (their rows are gone). */
export async function deleteOrphanFilters(db: Db): Promise<void> {
  await db
    .deleteFrom('event_filter')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(selectFrom('session').select('session.did').whereRef('session.did', '=', 'event_filter.did')),
      ),
    )
    .execute();
}
