/**
 * What a dialect's SQL can do beyond what both share, for the repositories that have a cheaper
 * statement where it can: they ask for the capability, not which database runs (only the
 * dialect files know that). By dialect adapter, which a transaction shares with its database.
 */

/** Adapters of dialects that run INSERT, UPDATE and DELETE inside WITH (PostgreSQL). */
const writesInWith = new WeakSet<object>();

export function allowWritesInWith(adapter: object): void {
  writesInWith.add(adapter);
}

/** Whether `db`'s dialect runs a data-modifying statement inside WITH. */
export function canWriteInWith(db: { getExecutor(): { adapter: object } }): boolean {
  return writesInWith.has(db.getExecutor().adapter);
}
