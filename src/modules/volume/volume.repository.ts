/** Storage of volume files, commits and device grants (migration 0027). One query per function. */
import { sql } from 'kysely';
import type { Db } from '../../platform/database/database.js';
import { applyPage, type PageQuery } from '../../platform/paging.js';

export interface VolumeFileTable {
  uuid: string;
  volume_uuid: string;
  /** The volume's UUID at the root. */
  parent_uuid: string;
  /** Ancestor folders, "/<uuid>/.../" ("/" at the root). */
  path: string;
  sort_key: string;
  created: number;
  type: 'file' | 'folder';
  name: string;
  ctime: number;
  mtime: number;
  size: number;
  mime_type: string | null;
  md5: string | null;
  charged: number;
  content: Buffer | null;
}

export interface VolumeCommitTable {
  uuid: string;
  volume_uuid: string;
  sort_key: string;
  time: number;
  user_uuid: string;
  message: string;
  /** JSON: [{action, file}]. */
  changes: string;
  /** Bytes the record counts against the owner's storage volume. */
  charged: number;
}

export interface VolumeGrantTable {
  device_uuid: string;
  volume_uuid: string;
  user_uuid: string;
  expires: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    volume_file: VolumeFileTable;
    volume_commit: VolumeCommitTable;
    volume_grant: VolumeGrantTable;
  }
}

export type FileRow = Omit<VolumeFileTable, 'content'>;

const FILE_COLUMNS = [
  'uuid',
  'volume_uuid',
  'parent_uuid',
  'path',
  'sort_key',
  'created',
  'type',
  'name',
  'ctime',
  'mtime',
  'size',
  'mime_type',
  'md5',
  'charged',
] as const;

export function insertFile(db: Db, row: VolumeFileTable): Promise<unknown> {
  return db.insertInto('volume_file').values(row).execute();
}

export function findFile(db: Db, volume: string, uuid: string): Promise<FileRow | undefined> {
  return db
    .selectFrom('volume_file')
    .select(FILE_COLUMNS)
    .where('volume_uuid', '=', volume)
    .where('uuid', '=', uuid)
    .executeTakeFirst();
}

export function findContent(
  db: Db,
  volume: string,
  uuid: string,
): Promise<{ content: Buffer | null; mime_type: string | null; type: string } | undefined> {
  return db
    .selectFrom('volume_file')
    .select(['content', 'mime_type', 'type'])
    .where('volume_uuid', '=', volume)
    .where('uuid', '=', uuid)
    .executeTakeFirst();
}

export async function nameTaken(db: Db, volume: string, parent: string, name: string): Promise<boolean> {
  const row = await db
    .selectFrom('volume_file')
    .select('uuid')
    .where('volume_uuid', '=', volume)
    .where('parent_uuid', '=', parent)
    .where('name', '=', name)
    .executeTakeFirst();
  return row !== undefined;
}

/** The user's volumes, those in the trash included. */
export async function countVolumes(db: Db, owner: string): Promise<number> {
  const row = await db
    .selectFrom('object')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('type', '=', 'volume')
    .where('owner', '=', owner)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export async function countFiles(db: Db, volume: string): Promise<number> {
  const row = await db
    .selectFrom('volume_file')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('volume_uuid', '=', volume)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export function listFolder(
  db: Db,
  volume: string,
  parent: string,
  page: PageQuery,
  defaultCount: number,
): Promise<FileRow[]> {
  const query = db
    .selectFrom('volume_file')
    .select(FILE_COLUMNS)
    .where('volume_uuid', '=', volume)
    .where('parent_uuid', '=', parent);
  return applyPage(query, page, { time: 'created', key: 'sort_key' }, defaultCount).execute();
}

export function updateFile(
  db: Db,
  uuid: string,
  changes: Partial<Omit<VolumeFileTable, 'uuid' | 'volume_uuid'>>,
): Promise<unknown> {
  return db.updateTable('volume_file').set(changes).where('uuid', '=', uuid).execute();
}

/** Re-roots the paths of a moved folder's subtree: `from` prefix becomes `to`. */
export function movePaths(db: Db, volume: string, from: string, to: string): Promise<unknown> {
  return db
    .updateTable('volume_file')
    .set({ path: sql<string>`${to} || substr(path, ${from.length + 1})` })
    .where('volume_uuid', '=', volume)
    .where('path', 'like', `${from}%`)
    .execute();
}

/** Entries below a path prefix (a folder's subtree; "/" for the whole volume): count, bytes charged, deepest path. */
export async function subtreeStats(
  db: Db,
  volume: string,
  prefix: string,
): Promise<{ count: number; charged: number; longest: number }> {
  const row = await db
    .selectFrom('volume_file')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('count'),
      eb.fn.sum<number | string | null>('charged').as('charged'),
      eb.fn.max<number | string | null>(sql`length(path)`).as('longest'),
    ])
    .where('volume_uuid', '=', volume)
    .where('path', 'like', `${prefix}%`)
    .executeTakeFirst();
  return {
    count: Number(row?.count ?? 0),
    charged: Number(row?.charged ?? 0),
    longest: Number(row?.longest ?? 0),
  };
}

/** Deletes the entries below a path prefix. */
export function deleteBelow(db: Db, volume: string, prefix: string): Promise<unknown> {
  return db
    .deleteFrom('volume_file')
    .where('volume_uuid', '=', volume)
    .where('path', 'like', `${prefix}%`)
    .execute();
}

export function deleteFile(db: Db, uuid: string): Promise<unknown> {
  return db.deleteFrom('volume_file').where('uuid', '=', uuid).execute();
}

/** Per volume: entries, content bytes, newest commit. */
export function volumeStats(
  db: Db,
  volumes: readonly string[],
): Promise<{ volume_uuid: string; count: number | string; size: number | string | null }[]> {
  if (volumes.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('volume_file')
    .select((eb) => [
      'volume_uuid',
      eb.fn.countAll<number | string>().as('count'),
      eb.fn.sum<number | string | null>('size').as('size'),
    ])
    .where('volume_uuid', 'in', volumes)
    .groupBy('volume_uuid')
    .execute();
}

/** The newest commit of each volume. */
export function headCommits(
  db: Db,
  volumes: readonly string[],
): Promise<{ volume_uuid: string; head: string | null }[]> {
  if (volumes.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('volume_commit')
    .select((eb) => ['volume_uuid', eb.fn.max('sort_key').as('head')])
    .where('volume_uuid', 'in', volumes)
    .groupBy('volume_uuid')
    .execute() as Promise<{ volume_uuid: string; head: string | null }[]>;
}

export function insertCommit(db: Db, row: VolumeCommitTable): Promise<unknown> {
  return db.insertInto('volume_commit').values(row).execute();
}

export function listCommits(
  db: Db,
  volume: string,
  page: PageQuery,
  defaultCount: number,
): Promise<VolumeCommitTable[]> {
  const query = db.selectFrom('volume_commit').selectAll().where('volume_uuid', '=', volume);
  return applyPage(query, page, { time: 'time', key: 'sort_key' }, defaultCount).execute();
}

/** The sort key of the oldest commit a volume keeps (its `keep`-th newest), as a subquery. */
function oldestKept(db: Db, volume: string, keep: number) {
  return db
    .selectFrom('volume_commit')
    .select('sort_key')
    .where('volume_uuid', '=', volume)
    .orderBy('sort_key', 'desc')
    .offset(keep - 1)
    .limit(1);
}

/** Bytes charged for the commits of a volume older than its newest `keep`. */
export async function sumTrimmable(db: Db, volume: string, keep: number): Promise<number> {
  const row = await db
    .selectFrom('volume_commit')
    .select((eb) => eb.fn.sum<number | string | null>('charged').as('charged'))
    .where('volume_uuid', '=', volume)
    .where('sort_key', '<', oldestKept(db, volume, keep))
    .executeTakeFirst();
  return Number(row?.charged ?? 0);
}

/** Keeps the newest `keep` commits of a volume. */
export function trimCommits(db: Db, volume: string, keep: number): Promise<unknown> {
  return db
    .deleteFrom('volume_commit')
    .where('volume_uuid', '=', volume)
    .where('sort_key', '<', oldestKept(db, volume, keep))
    .execute();
}

// ---- device grants

/** Gives the device read access to the volume until `expires`, replacing an expired grant only. */
export async function insertGrant(db: Db, row: VolumeGrantTable, now: number): Promise<boolean> {
  const result = await db
    .insertInto('volume_grant')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('device_uuid')
        .doUpdateSet({ volume_uuid: row.volume_uuid, user_uuid: row.user_uuid, expires: row.expires })
        .where('volume_grant.expires', '<=', now),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export function findGrant(
  db: Db,
  device: string,
  volume: string,
  now: number,
): Promise<VolumeGrantTable | undefined> {
  return db
    .selectFrom('volume_grant')
    .selectAll()
    .where('device_uuid', '=', device)
    .where('volume_uuid', '=', volume)
    .where('expires', '>', now)
    .executeTakeFirst();
}

export function deleteGrant(db: Db, device: string, volume: string): Promise<unknown> {
  return db
    .deleteFrom('volume_grant')
    .where('device_uuid', '=', device)
    .where('volume_uuid', '=', volume)
    .execute();
}
