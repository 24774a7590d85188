/**
 * Storage of the calls in progress: one row per leg until its CDR is written (migration 0019),
 * and one row per call the concurrent-call quota admitted until it ends (migration 0018).
 */
import { PostgresAdapter, sql } from 'kysely';
import type { Db } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';
import { deleteEndedSubscriptions } from '../../platform/events/subscriptions.js';
import type { CallAdmission } from '../../telephony/index.js';

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

/** A call the quota admitted (one of its owner's concurrent calls) on a node. */
export interface CallAdmissionTable {
  id: string;
  node: string;
  owner: string;
  /** ms since epoch; refreshed while the node runs */
  heartbeat: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    running_call: RunningCallTable;
    call_admission: CallAdmissionTable;
  }
}

/**
 * Admits a call in one statement, atomically over every node: the admission row is written only
 * when the owner's live admissions are below `limit` and its usergroup members' below the group's
 * `calls`. PostgreSQL: `call_admit` (migration 0018) counts under an advisory lock per usergroup
 * and user. SQLite (one node): a conditional INSERT, serial on the one connection.
 */
export async function admitCall(db: Db, a: CallAdmission): Promise<boolean> {
  const groupLimit = a.group && a.group.members.length > 0 ? a.group.calls : null;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const { rows } = await admitOnPostgres.run(db, {
      id: a.id,
      node: a.node,
      owner: a.owner,
      limit: a.limit,
      usergroup: a.group?.usergroup ?? null,
      members: a.group?.members ?? [],
      groupLimit,
      aliveSince: a.aliveSince,
      now: a.now,
    });
    return rows[0]?.admitted === true;
  }
  const result = await admitOnSqlite.run(db, {
    id: a.id,
    node: a.node,
    owner: a.owner,
    limit: a.limit,
    // Only what the statement uses (an argument a prepared query does not bind is refused).
    members: groupLimit === null ? [] : (a.group?.members ?? []),
    groupLimit,
    aliveSince: a.limit === null && groupLimit === null ? null : a.aliveSince,
    now: a.now,
  });
  return Number(result.numAffectedRows ?? 0) > 0;
}

interface AdmitArguments {
  id: string;
  node: string;
  owner: string;
  limit: number | null;
  usergroup?: string | null;
  members: readonly string[];
  groupLimit: number | null;
  aliveSince: number | null;
  now: number;
}

// Compiled once: every call is admitted (docs/benchmarks.md "Calls").
const admitOnPostgres = preparedQuery(
  (_db: Db, a: AdmitArguments) => sql<{ admitted: boolean }>`SELECT call_admit(${a.id}, ${a.node}, ${a.owner},
      ${a.limit}, ${a.usergroup}, ${a.members}::text[], ${a.groupLimit}, ${a.aliveSince}, ${a.now}) AS admitted`,
);

const admitOnSqlite = preparedQuery((_db: Db, a: AdmitArguments) => {
  const ownLimit =
    a.limit === null
      ? sql`1 = 1`
      : sql`(SELECT count(*) FROM call_admission WHERE owner = ${a.owner} AND heartbeat >= ${a.aliveSince}) < ${a.limit}`;
  const group =
    a.groupLimit === null
      ? sql`1 = 1`
      : sql`(SELECT count(*) FROM call_admission WHERE owner IN (${sql.join(a.members)})
          AND heartbeat >= ${a.aliveSince}) < ${a.groupLimit}`;
  return sql`INSERT INTO call_admission (id, node, owner, heartbeat)
    SELECT ${a.id}, ${a.node}, ${a.owner}, ${a.now} WHERE ${ownLimit} AND ${group}`;
});

const admissionsDelete = preparedQuery((db, a: { ids: readonly string[] }) =>
  db.deleteFrom('call_admission').where('id', 'in', a.ids),
);

/** Ends admissions (the calls ended). */
export function deleteAdmissions(db: Db, ids: readonly string[]): Promise<unknown> {
  return admissionsDelete.run(db, { ids });
}

export function touchAdmissions(db: Db, node: string, heartbeat: number): Promise<unknown> {
  return db.updateTable('call_admission').set({ heartbeat }).where('node', '=', node).execute();
}

/** Drops the admissions of nodes silent since `staleBefore` and, when given, every one of `node` (its restart). */
export function deleteStaleAdmissions(db: Db, node: string | null, staleBefore: number): Promise<unknown> {
  return db
    .deleteFrom('call_admission')
    .where((eb) =>
      node === null
        ? eb('heartbeat', '<', staleBefore)
        : eb.or([eb('node', '=', node), eb('heartbeat', '<', staleBefore)]),
    )
    .execute();
}

export function insertRunningCall(db: Db, row: RunningCallTable): Promise<unknown> {
  return db.insertInto('running_call').values(row).execute();
}

/** The columns of running rows, each a list (a prepared query's arguments are lists, not rows). */
type RunningCallColumns = {
  readonly [column in keyof RunningCallTable]: readonly RunningCallTable[column][];
};

const COLUMNS = [
  'id',
  'node',
  'owner',
  'service',
  'direction',
  'number',
  'phone',
  'parent',
  'date',
  'answered',
  'heartbeat',
] as const satisfies readonly (keyof RunningCallTable)[];

// Compiled once per batch size: the leg batches of every call (call-recorder.ts).
const runningInsert = preparedQuery((db, a: RunningCallColumns) =>
  db.insertInto('running_call').values(
    a.id.map((_, i) => {
      const row: Record<string, unknown> = {};
      for (const column of COLUMNS) row[column] = a[column][i];
      return row as unknown as RunningCallTable;
    }),
  ),
);
const runningAnswered = preparedQuery((db, a: { id: string; answered: number }) =>
  db.updateTable('running_call').set({ answered: a.answered }).where('id', '=', a.id),
);
const runningDelete = preparedQuery((db, a: { ids: readonly string[] }) =>
  db.deleteFrom('running_call').where('id', 'in', a.ids).returning('id'),
);

/** Several legs in one statement (rows of a batch: at most INSERT_BATCH). */
export function insertRunningCalls(db: Db, rows: readonly RunningCallTable[]): Promise<unknown> {
  const columns = Object.fromEntries(
    COLUMNS.map((column) => [column, rows.map((row) => row[column])]),
  ) as unknown as RunningCallColumns;
  return runningInsert.run(db, columns);
}

export function setAnswered(db: Db, id: string, answered: number): Promise<unknown> {
  return runningAnswered.run(db, { id, answered });
}

export function findRunningCall(db: Db, id: string): Promise<RunningCallTable | undefined> {
  return db.selectFrom('running_call').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Deletes the legs' running rows; resolves with the ids of those that were there. */
export async function deleteRunningCalls(db: Db, ids: readonly string[]): Promise<string[]> {
  return (await runningDelete.all(db, { ids })).map((row) => row.id);
}

export function deleteRunningCall(db: Db, id: string): Promise<unknown> {
  return db.deleteFrom('running_call').where('id', '=', id).execute();
}

export function touchNode(db: Db, node: string, heartbeat: number): Promise<unknown> {
  return db.updateTable('running_call').set({ heartbeat }).where('node', '=', node).execute();
}

/** The leg is running on a node that beat since `aliveSince` (a lookup by primary key). */
export async function runningLegAlive(db: Db, id: string, aliveSince: number): Promise<boolean> {
  const row = await db
    .selectFrom('running_call')
    .select('id')
    .where('id', '=', id)
    .where('heartbeat', '>=', aliveSince)
    .executeTakeFirst();
  return row !== undefined;
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

/** A session subscribed to its user's call events (GET /api/call/event), until `expires` (ms). */
export interface CallSubscriptionTable {
  did: string;
  expires: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    call_event_subscription: CallSubscriptionTable;
  }
}

export async function upsertCallSubscription(db: Db, row: CallSubscriptionTable): Promise<void> {
  await db
    .insertInto('call_event_subscription')
    .values(row)
    .onConflict((c) => c.column('did').doUpdateSet({ expires: row.expires }))
    .execute();
}

export async function deleteCallSubscription(db: Db, did: string): Promise<void> {
  await db.deleteFrom('call_event_subscription').where('did', '=', did).execute();
}

/** Subscriptions that expired, or whose session is gone. */
export function deleteEndedCallSubscriptions(db: Db, now: number): Promise<void> {
  return deleteEndedSubscriptions(db, 'call_event_subscription', now);
}

export function listCallSubscriptions(db: Db): Promise<CallSubscriptionTable[]> {
  return db.selectFrom('call_event_subscription').selectAll().execute();
}

/** Whether a live session of `user` holds a call event subscription that has not ended by `now`. */
export async function hasCallSubscription(db: Db, user: string, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('call_event_subscription')
    .innerJoin('session', 'session.did', 'call_event_subscription.did')
    .select('call_event_subscription.did')
    .where('session.user_uuid', '=', user)
    .where('call_event_subscription.expires', '>', now)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
