/** Storage of ipquality (spec "ipquality"): parameters, schedule and results. One query per function. */
import type { Db } from '../../platform/database/database.js';
import { applyPage, type PageQuery } from '../../platform/paging.js';

export interface IpqualityTable {
  uuid: string;
  owner: string;
  source: string;
  destination: string | null;
  interval: number;
  duration: number;
  active: number;
  dscp: number;
  ptime: number;
  psize: number;
  /** ms since epoch the next measurement is due; null while none is scheduled. */
  next_run: number | string | null;
  /** Token of the run that holds the measurement, and until when (ms). */
  lease: string | null;
  lease_until: number | string | null;
  /** ms since epoch the running measurement started. */
  run_start: number | string | null;
}

export interface IpqualityResultTable {
  uuid: string;
  ipquality: string;
  time: number | string;
  sort_key: string;
  duration: number;
  /** JSON of the source's counters ({} when it gave none). */
  source: string;
  destination: string;
  /** Why the measurement failed; null for a measurement both sides answered. */
  error: string | null;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    ipquality: IpqualityTable;
    ipquality_result: IpqualityResultTable;
  }
}

export type Parameters = Pick<
  IpqualityTable,
  'source' | 'destination' | 'interval' | 'duration' | 'active' | 'dscp' | 'ptime' | 'psize'
>;

export function insertIpquality(db: Db, row: IpqualityTable): Promise<unknown> {
  return db.insertInto('ipquality').values(row).execute();
}

export function findIpquality(db: Db, uuid: string): Promise<IpqualityTable | undefined> {
  return db.selectFrom('ipquality').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export function findIpqualities(db: Db, uuids: readonly string[]): Promise<IpqualityTable[]> {
  if (uuids.length === 0) return Promise.resolve([]);
  return db.selectFrom('ipquality').selectAll().where('uuid', 'in', uuids).execute();
}

export async function countIpqualities(db: Db, owner: string): Promise<number> {
  const row = await db
    .selectFrom('ipquality')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner', '=', owner)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function updateIpquality(
  db: Db,
  uuid: string,
  changes: Partial<Parameters> & { next_run?: number | null },
): Promise<unknown> {
  return db.updateTable('ipquality').set(changes).where('uuid', '=', uuid).execute();
}

/**
 * Measurements due at `now` whose object is not in the trash, with no live lease (a lease that
 * ran out belongs to a node that died).
 */
export function dueIpqualities(db: Db, now: number, limit: number): Promise<IpqualityTable[]> {
  return db
    .selectFrom('ipquality')
    .innerJoin('object', 'object.uuid', 'ipquality.uuid')
    .selectAll('ipquality')
    .where('ipquality.active', '=', 1)
    .where('ipquality.destination', 'is not', null)
    .where('ipquality.next_run', '<=', now)
    .where('object.trashed', '=', 0)
    .where((eb) => eb.or([eb('ipquality.lease_until', 'is', null), eb('ipquality.lease_until', '<', now)]))
    .orderBy('ipquality.next_run')
    .limit(limit)
    .execute();
}

/** Measurements a node held when it died (lease run out), whatever their schedule now. */
export function expiredLeases(db: Db, now: number, limit: number): Promise<IpqualityTable[]> {
  return db
    .selectFrom('ipquality')
    .selectAll()
    .where('lease_until', '<', now)
    .orderBy('lease_until')
    .limit(limit)
    .execute();
}

/** The earliest instant (ms) a measurement is due, or null. */
export async function earliestRun(db: Db): Promise<number | null> {
  const row = await db
    .selectFrom('ipquality')
    .innerJoin('object', 'object.uuid', 'ipquality.uuid')
    .select((eb) => eb.fn.min('ipquality.next_run').as('next'))
    .where('ipquality.active', '=', 1)
    .where('ipquality.destination', 'is not', null)
    .where('ipquality.lease', 'is', null)
    .where('object.trashed', '=', 0)
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? null : Number(row.next);
}

/**
 * Claims a measurement for one run: one atomic update that succeeds only while the row is as
 * it was read (due, no live lease), so of several nodes exactly one gets it.
 */
export async function claim(
  db: Db,
  row: IpqualityTable,
  lease: string,
  now: number,
  until: number,
): Promise<boolean> {
  const result = await db
    .updateTable('ipquality')
    .set({ lease, lease_until: until, run_start: now, next_run: null })
    .where('uuid', '=', row.uuid)
    .where('next_run', '=', Number(row.next_run))
    .where((eb) =>
      row.lease === null
        ? eb('lease', 'is', null)
        : eb.and([eb('lease', '=', row.lease), eb('lease_until', '<', now)]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Takes over a lease that ran out (its node died): succeeds for one caller only. */
export async function takeExpired(db: Db, row: IpqualityTable, lease: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('ipquality')
    .set({ lease, lease_until: now + 60_000 })
    .where('uuid', '=', row.uuid)
    .where('lease', '=', row.lease)
    .where('lease_until', '<', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Locks the row of a run that ends (PostgreSQL; SQLite has one writer) and reads it. */
export function lockIpquality(db: Db, uuid: string): Promise<IpqualityTable | undefined> {
  return db.selectFrom('ipquality').selectAll().where('uuid', '=', uuid).forUpdate().executeTakeFirst();
}

/** Ends a run: the lease goes and the next measurement is scheduled (or none). */
export function finishRun(db: Db, uuid: string, nextRun: number | null): Promise<unknown> {
  return db
    .updateTable('ipquality')
    .set({ lease: null, lease_until: null, run_start: null, next_run: nextRun })
    .where('uuid', '=', uuid)
    .execute();
}

export function insertResult(db: Db, row: IpqualityResultTable): Promise<unknown> {
  return db.insertInto('ipquality_result').values(row).execute();
}

/** The sort key of the `keep`-th newest result (older ones go), or undefined. */
export async function keepFloor(db: Db, ipquality: string, keep: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('ipquality_result')
    .select('sort_key')
    .where('ipquality', '=', ipquality)
    .orderBy('sort_key', 'desc')
    .offset(keep - 1)
    .limit(1)
    .executeTakeFirst();
  return row?.sort_key;
}

export function deleteResultsBefore(db: Db, ipquality: string, sortKey: string): Promise<unknown> {
  return db
    .deleteFrom('ipquality_result')
    .where('ipquality', '=', ipquality)
    .where('sort_key', '<', sortKey)
    .execute();
}

export function pageResults(db: Db, ipquality: string, page: PageQuery, count: number) {
  return applyPage(
    db.selectFrom('ipquality_result').selectAll().where('ipquality', '=', ipquality),
    page,
    { time: 'time', key: 'sort_key' },
    count,
  ).execute();
}
