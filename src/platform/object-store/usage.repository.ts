/**
 * Storage of the per-user usage counters (docs/decisions.md "Storage volume"): the bytes a
 * user's objects take and their number per type. One query per function; every function takes
 * `db` or a transaction first.
 */
import { sql } from 'kysely';
import { canWriteInWith } from '../../db/dialect/capabilities.js';
import type { Db } from '../database/database.js';
import { preparedQuery } from '../database/prepared.js';

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
 * Adds `delta` bytes to the user's volume in one statement; with `limit`, only while the sum
 * stays within it (the row lock of the update makes a concurrent write wait and test the sum
 * it left). False when the limit refused it.
 */
export async function addVolume(db: Db, user: string, delta: number, limit: number | null): Promise<boolean> {
  const result = await addVolumeQuery.run(db, { user, delta, limit });
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** Compiled once: every write that changes a volume runs it. */
const addVolumeQuery = preparedQuery((db, a: { user: string; delta: number; limit: number | null }) =>
  db
    .insertInto('user_usage')
    .values({ user_uuid: a.user, volume: a.delta })
    .onConflict((oc) => {
      const update = oc
        .column('user_uuid')
        .doUpdateSet((eb) => ({ volume: eb('user_usage.volume', '+', eb.ref('excluded.volume')) }));
      return a.limit === null
        ? update
        : update.where((eb) => eb(eb('user_usage.volume', '+', eb.ref('excluded.volume')), '<=', a.limit));
    }),
);

/**
 * A new object of `type` with `bytes` on its owner's counters: the volume (with `limit`, only
 * while the sum stays within it) and the count of the type. False when the limit refused it;
 * then neither counter changed. `commitBehind`: PreparedQuery.run's (PostgreSQL; a refusal
 * fails the statement, so the COMMIT behind it rolls back). On PostgreSQL one statement, so that the row locks it takes are
 * held for one round trip fewer; SQLite has no INSERT in a WITH, and there two statements cost
 * no round trip.
 */
export async function addNewObject(
  db: Db,
  user: string,
  type: string,
  bytes: number,
  limit: number | null,
  commitBehind = false,
): Promise<boolean> {
  if (!canWriteInWith(db)) {
    if (!(await addVolume(db, user, bytes, limit))) return false;
    await addObjectCount(db, user, type, 1);
    return true;
  }
  try {
    await addNewObjectQuery.run(db, { user, type, bytes, limit }, commitBehind);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === DIVISION_BY_ZERO) return false;
    throw error;
  }
}

/** SQLSTATE 22012: the statement's way of saying that the volume upsert was refused. */
const DIVISION_BY_ZERO = '22012';

/**
 * The refused volume upsert returns no row, and the count it divides 1 by is then 0: the
 * statement fails rather than answering with no row, so that it refuses even when nothing reads
 * its answer before the COMMIT behind it (and the transaction it aborts keeps nothing).
 */
const addNewObjectQuery = preparedQuery(
  (_db, a: { user: string; type: string; bytes: number; limit: number | null }) => sql`with charged as (
  insert into user_usage (user_uuid, volume) values (${a.user}, ${a.bytes})
  on conflict (user_uuid) do update set volume = user_usage.volume + excluded.volume
  ${a.limit === null ? sql`` : sql`where user_usage.volume + excluded.volume <= ${a.limit}`}
  returning 1
)
insert into user_object_count (user_uuid, type, count)
values (${a.user}, ${a.type}, 1 / (select count(*)::int from charged))
on conflict (user_uuid, type) do update set count = user_object_count.count + excluded.count`,
);

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
