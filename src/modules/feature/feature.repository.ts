/** Storage of feature packs and their assignment to users (decisions.md "Feature packs"). */
import { type Expression, PostgresAdapter, type RawBuilder, sql } from 'kysely';
import type { Db } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';

export interface FeaturePackTable {
  name: string;
  /** JSON {sip, volume, fax, calls} */
  quota: string;
  /** JSON map of feature flag to boolean */
  feature: string;
  is_default: number;
  created: number;
}

export interface UserFeaturePackTable {
  user_uuid: string;
  pack: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    feature_pack: FeaturePackTable;
    user_feature_pack: UserFeaturePackTable;
  }
}

export function insertPack(db: Db, row: FeaturePackTable): Promise<unknown> {
  return db.insertInto('feature_pack').values(row).execute();
}

export function findPack(db: Db, name: string): Promise<FeaturePackTable | undefined> {
  return db.selectFrom('feature_pack').selectAll().where('name', '=', name).executeTakeFirst();
}

export function listPacks(db: Db): Promise<FeaturePackTable[]> {
  return db.selectFrom('feature_pack').selectAll().orderBy('name').execute();
}

export function updatePack(db: Db, name: string, changes: Partial<FeaturePackTable>): Promise<unknown> {
  return db.updateTable('feature_pack').set(changes).where('name', '=', name).execute();
}

export async function deletePack(db: Db, name: string): Promise<boolean> {
  const result = await db.deleteFrom('feature_pack').where('name', '=', name).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Names of the packs every new user gets. */
export async function listDefaultPackNames(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('feature_pack').select('name').where('is_default', '=', 1).execute();
  return rows.map((row) => row.name);
}

/** How many users hold each pack (packs nobody holds are absent). */
export async function countUsersByPack(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('user_feature_pack')
    .select(['pack', (eb) => eb.fn.countAll<number | string>().as('users')])
    .groupBy('pack')
    .execute();
  return new Map(rows.map((row) => [row.pack, Number(row.users)]));
}

export function insertUserPacks(db: Db, rows: UserFeaturePackTable[]): Promise<unknown> {
  return db
    .insertInto('user_feature_pack')
    .values(rows)
    .onConflict((oc) => oc.columns(['user_uuid', 'pack']).doNothing())
    .execute();
}

export async function deleteUserPack(db: Db, userUuid: string, pack: string): Promise<boolean> {
  const result = await db
    .deleteFrom('user_feature_pack')
    .where('user_uuid', '=', userUuid)
    .where('pack', '=', pack)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The packs a user holds, with their quotas and flags, by name. */
/** Compiled once: the call engine reads the quota on every call. */
const packsOfUser = preparedQuery((db, a: { userUuid: string }) =>
  db
    .selectFrom('user_feature_pack')
    .innerJoin('feature_pack', 'feature_pack.name', 'user_feature_pack.pack')
    .selectAll('feature_pack')
    .where('user_feature_pack.user_uuid', '=', a.userUuid)
    .orderBy('feature_pack.name'),
);

export function listPacksOfUser(db: Db, userUuid: string): Promise<FeaturePackTable[]> {
  return packsOfUser.all(db, { userUuid });
}

/**
 * The user's storage volume quota in bytes as an SQL expression: the sum of `volume` (MB) over
 * the packs they hold, 0 without packs. The object store's counter statements embed it, so the
 * quota check of a write reads the packs in the statement it runs anyway. It reads what the
 * service stores (whole numbers; a key an older row lacks counts as 0). `->>` reads a text
 * column's JSON on SQLite; PostgreSQL needs it cast to json first.
 */
export function volumeQuotaBytes(db: Db, user: Expression<string>): RawBuilder<number | string> {
  const quota =
    db.getExecutor().adapter instanceof PostgresAdapter ? sql`cast(fp.quota as json)` : sql`fp.quota`;
  return sql<number | string>`(select coalesce(sum(cast(${quota} ->> 'volume' as numeric)), 0) * 1048576
    from user_feature_pack as ufp inner join feature_pack as fp on fp.name = ufp.pack
    where ufp.user_uuid = ${user})`;
}
