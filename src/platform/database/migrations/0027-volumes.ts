/**
 * Volumes (spec "/api/volume family", events file_new, file_modify,
 * file_delete, the upgrade task): the files and folders of a volume object with their content,
 * the commits that group changes, and the read grants an upgrade gives a device.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  // A file or folder. `parent_uuid` is the volume's UUID at the root, so that names are unique
  // per folder in both databases; `path` lists the ancestor folders ("/<uuid>/<uuid>/", "/" at
  // the root) so that a folder's subtree is one prefix. `charged` is what the entry counts
  // against the owner's storage volume (content, name and a fixed overhead).
  await db.schema
    .createTable('volume_file')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('volume_uuid', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('parent_uuid', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('created', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('ctime', 'bigint', (c) => c.notNull())
    .addColumn('mtime', 'bigint', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('mime_type', 'text')
    .addColumn('md5', 'text')
    .addColumn('charged', 'bigint', (c) => c.notNull())
    .addColumn('content', sql.raw(pg ? 'bytea' : 'blob'))
    .addUniqueConstraint('volume_file_name', ['volume_uuid', 'parent_uuid', 'name'])
    .execute();
  await db.schema
    .createIndex('volume_file_parent')
    .on('volume_file')
    .columns(['volume_uuid', 'parent_uuid', 'sort_key'])
    .execute();
  await db.schema
    .createIndex('volume_file_path')
    .on('volume_file')
    .columns(['volume_uuid', 'path'])
    .execute();

  // The commit history of a volume: who changed what when (the newest 1000 per volume are kept);
  // `charged` is what the record counts against the owner's storage volume.
  await db.schema
    .createTable('volume_commit')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('volume_uuid', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('user_uuid', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('changes', 'text', (c) => c.notNull())
    .addColumn('charged', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('volume_commit_volume')
    .on('volume_commit')
    .columns(['volume_uuid', 'sort_key'])
    .execute();

  // The volume a device may read while it runs an upgrade from it (one upgrade per device).
  await db.schema
    .createTable('volume_grant')
    .addColumn('device_uuid', 'text', (c) => c.primaryKey().references('device.uuid').onDelete('cascade'))
    .addColumn('volume_uuid', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('user_uuid', 'text', (c) => c.notNull())
    .addColumn('expires', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('volume_grant').execute();
  await db.schema.dropTable('volume_commit').execute();
  await db.schema.dropTable('volume_file').execute();
}
