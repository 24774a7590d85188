/**
 * Storage of the per-user usage counters (docs/decisions.md "Storage volume"): the bytes a
 * user's objects take and their number per type. One query per function; every function takes
 * `db` or a transaction first.
 */
import { type Expression, sql } from 'kysely';
import { canWriteInWith } from '../../db/dialect/capabilities.js';
import type { Db } from '../database/database.js';
import { type PreparedQuery, preparedQuery } from '../database/prepared.js';

export interface UserUsageTable {
  user_uuid: string;
  /** Bytes of the user's objects, trashed ones included: volume + attached_volume of each. */
  volume: number;
}

export interface UserObjectCountTable {
  user_uuid: string;
  type: string;
  /** The user's objects of the type, trashed ones included. */
  count: number;
}

declare module '../database/database.js' {
  interface Tables {
    user_usage: UserUsageTable;
    user_object_count: UserObjectCountTable;
  }
}

/**
 * A user's storage volume quota in bytes as an SQL expression of the user (from the feature
 * packs; the feature area gives it). The counter statements below test against it themselves,
 * so the limit is what the database holds when the write runs: a pack changed on any node limits
 * the next write on every node, and no statement of its own reads it (docs/benchmarks.md "The
 * object path: writes, fifth round").
 */
export type VolumeQuotaSql = (db: Db, user: Expression<string>) => Expression<number | string>;

interface ChargeArgs {
  user: string;
  delta: number;
  /** Whether the sum must stay within the quota (a layout flag: it changes the SQL). */
  checked: boolean;
}

/** The counter statements for one quota expression (compiled once per dialect and layout). */
interface ChargeStatements {
  addVolume: PreparedQuery<ChargeArgs, unknown>;
  addNewObject: PreparedQuery<ChargeArgs & { type: string }, unknown>;
  readVolumeAndQuota: PreparedQuery<
    { user: string },
    { used: number | string | null; allowed: number | string }
  >;
}

const statementsByQuota = new WeakMap<VolumeQuotaSql, ChargeStatements>();

function statementsFor(quota: VolumeQuotaSql): ChargeStatements {
  let statements = statementsByQuota.get(quota);
  if (statements) return statements;
  // The row is inserted only when its first bytes fit, and grown only while the sum fits: the
  // row lock of the update makes a concurrent write wait and test the sum it left. The SELECT
  // always has a WHERE (SQLite reads ON CONFLICT after a bare SELECT as a join's ON); once the
  // row exists its index probe answers it, and the quota is read once, by the update's WHERE.
  const charge = (db: Db, a: ChargeArgs) => sql`insert into user_usage (user_uuid, volume)
  select cast(${a.user} as text), cast(${a.delta} as bigint)
  where ${
    a.checked
      ? sql`exists (select 1 from user_usage where user_uuid = ${a.user})
    or cast(${a.delta} as bigint) <= ${quota(db, sql.val(a.user))}`
      : sql`1 = 1`
  }
  on conflict (user_uuid) do update set volume = user_usage.volume + excluded.volume
  ${a.checked ? sql`where user_usage.volume + excluded.volume <= ${quota(db, sql.val(a.user))}` : sql``}`;
  statements = {
    addVolume: preparedQuery((db, a: ChargeArgs) => charge(db, a)),
    // The refused volume upsert returns no row, and the count it divides 1 by is then 0: the
    // statement fails rather than answering with no row, so that it refuses even when nothing
    // reads its answer before the COMMIT behind it (and the transaction it aborts keeps nothing).
    addNewObject: preparedQuery(
      (db, a: ChargeArgs & { type: string }) => sql`with charged as (
  ${charge(db, a)}
  returning 1
)
insert into user_object_count (user_uuid, type, count)
values (${a.user}, ${a.type}, 1 / (select count(*)::int from charged))
on conflict (user_uuid, type) do update set count = user_object_count.count + excluded.count`,
    ),
    readVolumeAndQuota: preparedQuery(
      (db, a: { user: string }) => sql<{ used: number | string | null; allowed: number | string }>`select
  (select volume from user_usage where user_uuid = ${a.user}) as used,
  ${quota(db, sql.val(a.user))} as allowed`,
    ),
  };
  statementsByQuota.set(quota, statements);
  return statements;
}

/**
 * Adds `delta` bytes to the user's volume in one statement; with `quota`, only while the sum
 * stays within it. False when the quota refused it.
 */
export async function addVolume(
  db: Db,
  user: string,
  delta: number,
  quota: VolumeQuotaSql,
  checked: boolean,
): Promise<boolean> {
  const result = await statementsFor(quota).addVolume.run(db, { user, delta, checked });
  return Number(result.numAffectedRows ?? 0) > 0;
}

/**
 * A new object of `type` with `bytes` on its owner's counters: the volume (if `checked`, only
 * while the sum stays within the quota) and the count of the type. False when the quota refused
 * it; then neither counter changed. `commitBehind`: PreparedQuery.run's (PostgreSQL; a refusal
 * fails the statement, so the COMMIT behind it rolls back). On PostgreSQL one statement, so that
 * the row locks it takes are held for one round trip fewer; SQLite has no INSERT in a WITH, and
 * there two statements cost no round trip.
 */
export async function addNewObject(
  db: Db,
  user: string,
  type: string,
  bytes: number,
  quota: VolumeQuotaSql,
  checked: boolean,
  commitBehind = false,
): Promise<boolean> {
  if (!canWriteInWith(db)) {
    if (!(await addVolume(db, user, bytes, quota, checked))) return false;
    await addObjectCount(db, user, type, 1);
    return true;
  }
  try {
    await statementsFor(quota).addNewObject.run(db, { user, delta: bytes, checked, type }, commitBehind);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === DIVISION_BY_ZERO) return false;
    throw error;
  }
}

/** SQLSTATE 22012: the statement's way of saying that the volume upsert was refused. */
const DIVISION_BY_ZERO = '22012';

/** Bytes the user's objects take and the bytes their quota allows, in one statement. */
export async function readVolumeAndQuota(
  db: Db,
  user: string,
  quota: VolumeQuotaSql,
): Promise<{ used: number; allowed: number }> {
  const row = await statementsFor(quota).readVolumeAndQuota.first(db, { user });
  return { used: Number(row?.used ?? 0), allowed: Number(row?.allowed ?? 0) };
}

/** Bytes the user's objects take (0 for a user who never stored one). */
export async function readVolume(db: Db, user: string): Promise<number> {
  const row = await readVolumeQuery.first(db, { user });
  return Number(row?.volume ?? 0);
}

const readVolumeQuery = preparedQuery((db, a: { user: string }) =>
  db.selectFrom('user_usage').select('volume').where('user_uuid', '=', a.user),
);

/** Adds `delta` (1 for a new object, -1 for a purged one) to the user's objects of a type. */
export function addObjectCount(db: Db, user: string, type: string, delta: number): Promise<unknown> {
  return addObjectCountQuery.run(db, { user, type, delta });
}

const addObjectCountQuery = preparedQuery((db, a: { user: string; type: string; delta: number }) =>
  db
    .insertInto('user_object_count')
    .values({ user_uuid: a.user, type: a.type, count: a.delta })
    .onConflict((oc) =>
      oc
        .columns(['user_uuid', 'type'])
        .doUpdateSet((eb) => ({ count: eb('user_object_count.count', '+', eb.ref('excluded.count')) })),
    ),
);

/** The user's objects per type (types with none left may be listed with 0). */
export async function readObjectCounts(db: Db, user: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('user_object_count')
    .select(['type', 'count'])
    .where('user_uuid', '=', user)
    .execute();
  return Object.fromEntries(rows.map((row) => [row.type, Number(row.count)]));
}

// ---- recomputing (the operator's check) ----

/** Every user's volume as the counter holds it and as the sum over their objects gives it. */
export async function compareVolumes(
  db: Db,
): Promise<{ user_uuid: string; counted: number | string | null; summed: number | string | null }[]> {
  return db
    .selectFrom('user as u')
    .leftJoin('user_usage as c', 'c.user_uuid', 'u.uuid')
    .select((eb) => [
      'u.uuid as user_uuid',
      'c.volume as counted',
      eb
        .selectFrom('object as o')
        .whereRef('o.owner', '=', 'u.uuid')
        .select((e) =>
          e.fn.sum<number | string | null>(e('o.volume', '+', e.ref('o.attached_volume'))).as('s'),
        )
        .as('summed'),
    ])
    .orderBy('u.uuid')
    .execute();
}

/** Objects per user and type as the sum over the object rows gives them. */
export function sumObjectCounts(db: Db): Promise<{ owner: string; type: string; count: number | string }[]> {
  return db
    .selectFrom('object')
    .select((eb) => ['owner', 'type', eb.fn.countAll<number | string>().as('count')])
    .groupBy(['owner', 'type'])
    .execute();
}

/** Every counter of objects per type. */
export function listObjectCounts(db: Db): Promise<UserObjectCountTable[]> {
  return db.selectFrom('user_object_count').selectAll().execute();
}

/** Sets the user's volume (the recomputed sum). */
export function setVolume(db: Db, user: string, volume: number): Promise<unknown> {
  return db
    .insertInto('user_usage')
    .values({ user_uuid: user, volume })
    .onConflict((oc) => oc.column('user_uuid').doUpdateSet({ volume }))
    .execute();
}

/** Sets the user's objects of a type (the recomputed count). */
export function setObjectCount(db: Db, user: string, type: string, count: number): Promise<unknown> {
  return db
    .insertInto('user_object_count')
    .values({ user_uuid: user, type, count })
    .onConflict((oc) => oc.columns(['user_uuid', 'type']).doUpdateSet({ count }))
    .execute();
}

/** Before an object's row goes: its bytes, as stored, leave its owner's volume. */
export function releaseObjectVolume(db: Db, owner: string, object: string): Promise<unknown> {
  return releaseQuery.run(db, { owner, object });
}

const releaseQuery = preparedQuery((db, a: { owner: string; object: string }) =>
  db
    .updateTable('user_usage')
    .set((eb) => ({
      volume: eb(
        'volume',
        '-',
        eb.fn.coalesce(
          eb
            .selectFrom('object')
            .select((e) => e('object.volume', '+', e.ref('object.attached_volume')).as('bytes'))
            .where('object.uuid', '=', a.object),
          eb.lit(0),
        ),
      ),
    }))
    .where('user_uuid', '=', a.owner),
);
