/**
 * Storage of fax sending (spec "Fax", POST /api/fax/{uuid}/send; decisions.md "Sending faxes"):
 * the queue of transmissions (fax_job) and the pages each user sent per month (fax_usage).
 * One query per function; each takes `db` or a transaction first.
 */
import { PostgresAdapter, sql } from 'kysely';
import type { Db } from '../../platform/database/database.js';

export interface FaxJobTable {
  report: string;
  fax: string;
  owner: string;
  from_number: string;
  to_number: string;
  fax_ident: string;
  fax_header: string;
  content: string;
  page_count: number;
  attempts: number;
  /** ms since epoch */
  due: number;
  lease_node: string | null;
  /** ms since epoch; below now = no node holds the job */
  lease_until: number;
  created: number;
}

export interface FaxUsageTable {
  user_uuid: string;
  month: string;
  pages: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    fax_job: FaxJobTable;
    fax_usage: FaxUsageTable;
  }
}

export function insertJob(db: Db, row: FaxJobTable): Promise<unknown> {
  return db.insertInto('fax_job').values(row).execute();
}

export function findJob(db: Db, report: string): Promise<FaxJobTable | undefined> {
  return db.selectFrom('fax_job').selectAll().where('report', '=', report).executeTakeFirst();
}

export function deleteJob(db: Db, report: string): Promise<unknown> {
  return db.deleteFrom('fax_job').where('report', '=', report).execute();
}

/** The owner's jobs not ended yet: how many, and their pages (the quota counts them as sent). */
export async function queuedOf(db: Db, owner: string): Promise<{ jobs: number; pages: number }> {
  const row = await db
    .selectFrom('fax_job')
    .select((eb) => [eb.fn.countAll<number>().as('jobs'), eb.fn.sum<number>('page_count').as('pages')])
    .where('owner', '=', owner)
    .executeTakeFirst();
  return { jobs: Number(row?.jobs ?? 0), pages: Number(row?.pages ?? 0) };
}

/**
 * Serialises the claims of all nodes (PostgreSQL: a transaction-scoped advisory lock), so that
 * the per-account and per-destination bounds hold across nodes. SQLite writes are serial.
 */
export async function lockClaims(db: Db): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter)
    await sql`SELECT pg_advisory_xact_lock(hashtextextended('fax_job_claim', 0))`.execute(db);
}

/** Jobs due at `now` that no node holds, oldest due first. */
export function listDue(db: Db, now: number, limit: number): Promise<FaxJobTable[]> {
  return db
    .selectFrom('fax_job')
    .selectAll()
    .where('due', '<=', now)
    .where('lease_until', '<', now)
    .orderBy('due')
    .orderBy('created')
    .limit(limit)
    .execute();
}

/** Jobs held by a live lease: their owners and destinations (the bounds of the claim). */
export function listRunning(db: Db, now: number): Promise<Pick<FaxJobTable, 'owner' | 'to_number'>[]> {
  return db.selectFrom('fax_job').select(['owner', 'to_number']).where('lease_until', '>=', now).execute();
}

/** Leases a job to `node` until `until`; false when another claim took it meanwhile. */
export async function lease(
  db: Db,
  report: string,
  node: string,
  now: number,
  until: number,
): Promise<boolean> {
  const result = await db
    .updateTable('fax_job')
    .set({ lease_node: node, lease_until: until })
    .where('report', '=', report)
    .where('lease_until', '<', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Extends the lease of a job this node runs. */
export function renewLease(db: Db, report: string, node: string, until: number): Promise<unknown> {
  return db
    .updateTable('fax_job')
    .set({ lease_until: until })
    .where('report', '=', report)
    .where('lease_node', '=', node)
    .execute();
}

/** Puts a job back for attempt `attempts + 1` at `due`. */
export function reschedule(db: Db, report: string, attempts: number, due: number): Promise<unknown> {
  return db
    .updateTable('fax_job')
    .set({ attempts, due, lease_node: null, lease_until: 0 })
    .where('report', '=', report)
    .execute();
}

/** When the next job can be claimed (ms): its due time, or the end of a lease on it. */
export async function nextDue(db: Db): Promise<number | undefined> {
  const row = await db
    .selectFrom('fax_job')
    .select(
      sql<number | string | null>`MIN(CASE WHEN lease_until > due THEN lease_until ELSE due END)`.as('at'),
    )
    .executeTakeFirst();
  return row?.at == null ? undefined : Number(row.at);
}

/** Pages the user sent in `month` (YYYY-MM). */
export async function pagesOf(db: Db, user: string, month: string): Promise<number> {
  const row = await db
    .selectFrom('fax_usage')
    .select('pages')
    .where('user_uuid', '=', user)
    .where('month', '=', month)
    .executeTakeFirst();
  return Number(row?.pages ?? 0);
}

export function addPages(db: Db, user: string, month: string, pages: number): Promise<unknown> {
  return db
    .insertInto('fax_usage')
    .values({ user_uuid: user, month, pages })
    .onConflict((oc) =>
      oc.columns(['user_uuid', 'month']).doUpdateSet((eb) => ({ pages: eb('fax_usage.pages', '+', pages) })),
    )
    .execute();
}
