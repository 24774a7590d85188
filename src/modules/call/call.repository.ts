/** Storage of the calls in progress (migration 0019): one row per leg until its CDR is written. */
import type { Db } from '../../platform/database/database.js';

export interface RunningCallTable {
  id: string;
  node: string;
  owner: string | null;
  service: string;
  /** `in` or `out` */
  direction: string;
  number: string;
  phone: string | null;
  parent: string | null;
  /** ms since epoch */
  date: number;
  answered: number | null;
  heartbeat: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    running_call: RunningCallTable;
  }
}

export function insertRunningCall(db: Db, row: RunningCallTable): Promise<unknown> {
  return db.insertInto('running_call').values(row).execute();
}

/** Several legs in one statement (rows of a batch: at most INSERT_BATCH). */
export function insertRunningCalls(db: Db, rows: readonly RunningCallTable[]): Promise<unknown> {
  return db.insertInto('running_call').values(rows).execute();
}

export function setAnswered(db: Db, id: string, answered: number): Promise<unknown> {
  return db.updateTable('running_call').set({ answered }).where('id', '=', id).execute();
}

export function findRunningCall(db: Db, id: string): Promise<RunningCallTable | undefined> {
  return db.selectFrom('running_call').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findRunningCalls(db: Db, ids: readonly string[]): Promise<RunningCallTable[]> {
  return db.selectFrom('running_call').selectAll().where('id', 'in', ids).execute();
}

export function deleteRunningCalls(db: Db, ids: readonly string[]): Promise<unknown> {
  return db.deleteFrom('running_call').where('id', 'in', ids).execute();
}

export function deleteRunningCall(db: Db, id: string): Promise<unknown> {
  return db.deleteFrom('running_call').where('id', '=', id).execute();
}

export function touchNode(db: Db, node: string, heartbeat: number): Promise<unknown> {
  return db.updateTable('running_call').set({ heartbeat }).where('node', '=', node).execute();
}

/** Legs of `node` (when given) and legs silent since `staleBefore`, oldest first (parents before children). */
export function listOrphans(db: Db, node: string | null, staleBefore: number): Promise<RunningCallTable[]> {
  return db
    .selectFrom('running_call')
    .selectAll()
    .where((eb) =>
      node === null
        ? eb('heartbeat', '<', staleBefore)
        : eb.or([eb('node', '=', node), eb('heartbeat', '<', staleBefore)]),
    )
    .orderBy('date')
    .limit(1000)
    .execute();
}

/**
 * The user's calls in progress on nodes other than `node` (their first legs: a leg with a parent
 * belongs to a call already counted) whose node was alive since `aliveSince`.
 */
export async function countCallsElsewhere(
  db: Db,
  owner: string,
  node: string,
  aliveSince: number,
): Promise<number> {
  const row = await db
    .selectFrom('running_call')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('owner', '=', owner)
    .where('parent', 'is', null)
    // `node != ?` as two ranges: the index (owner, node) skips this node's own legs unread.
    .where((eb) => eb.or([eb('node', '<', node), eb('node', '>', node)]))
    .where('heartbeat', '>=', aliveSince)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** As countCallsElsewhere, for the calls of any of `owners` (a usergroup's members). */
export async function countOwnersCallsElsewhere(
  db: Db,
  owners: readonly string[],
  node: string,
  aliveSince: number,
): Promise<number> {
  if (owners.length === 0) return 0;
  const row = await db
    .selectFrom('running_call')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('owner', 'in', owners)
    .where('parent', 'is', null)
    .where((eb) => eb.or([eb('node', '<', node), eb('node', '>', node)]))
    .where('heartbeat', '>=', aliveSince)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Calls to each of `numbers` in progress on any node alive since `aliveSince` (the callers' legs). */
export function countCallsTo(
  db: Db,
  numbers: readonly string[],
  aliveSince: number,
): Promise<{ phone: string | null; n: string | number | bigint }[]> {
  return db
    .selectFrom('running_call')
    .select((eb) => ['phone', eb.fn.countAll().as('n')])
    .where('phone', 'in', numbers)
    .where('service', '=', 'call')
    .where('direction', '=', 'in')
    .where('parent', 'is', null)
    .where('heartbeat', '>=', aliveSince)
    .groupBy('phone')
    .execute();
}
