/** The throttle's queries (table `throttle`, created by the user area's migration). */
import type { Db } from '../database/database.js';

export interface ThrottleTable {
  scope: string;
  subject: string;
  window_start: number;
  failures: number;
}

declare module '../database/database.js' {
  interface Tables {
    throttle: ThrottleTable;
  }
}

export function findThrottle(db: Db, scope: string, subject: string): Promise<ThrottleTable | undefined> {
  return db
    .selectFrom('throttle')
    .selectAll()
    .where('scope', '=', scope)
    .where('subject', '=', subject)
    .executeTakeFirst();
}

export function saveThrottle(db: Db, row: ThrottleTable): Promise<unknown> {
  return db
    .insertInto('throttle')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['scope', 'subject'])
        .doUpdateSet({ window_start: row.window_start, failures: row.failures }),
    )
    .execute();
}

export function deleteThrottle(db: Db, scope: string, subject: string): Promise<unknown> {
  return db.deleteFrom('throttle').where('scope', '=', scope).where('subject', '=', subject).execute();
}

/** Deletes the rows of the scopes that last until `before` (`kept` rows last longer). */
export function deleteStaleThrottles(db: Db, before: number, kept: string): Promise<unknown> {
  return db.deleteFrom('throttle').where('window_start', '<', before).where('scope', '!=', kept).execute();
}

export function deleteStaleScope(db: Db, scope: string, before: number): Promise<unknown> {
  return db.deleteFrom('throttle').where('scope', '=', scope).where('window_start', '<', before).execute();
}
