/**
 * Per-user usage counters (docs/decisions.md "Storage volume"): the bytes a user's objects take
 * and how many objects of each type they own, kept by every write in its own transaction so that
 * the quota check reads one row instead of summing the user's objects. Filled here from the sums.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_usage')
    .addColumn('user_uuid', 'text', (c) => c.primaryKey().references('user.uuid').onDelete('cascade'))
    .addColumn('volume', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('user_object_count')
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('user_object_count_pk', ['user_uuid', 'type'])
    .execute();
  await sql`INSERT INTO user_usage (user_uuid, volume)
    SELECT u.uuid, COALESCE((SELECT SUM(o.volume + o.attached_volume) FROM object o WHERE o.owner = u.uuid), 0)
    FROM "user" u`.execute(db);
  await sql`INSERT INTO user_object_count (user_uuid, type, count)
    SELECT owner, type, COUNT(*) FROM object GROUP BY owner, type`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('user_object_count').execute();
  await db.schema.dropTable('user_usage').execute();
}
