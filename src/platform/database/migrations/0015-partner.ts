/**
 * Partner API (spec "Partner API"): a user's `ignore_ip_whitelisting` flag, set by the partner,
 * and the call filter a partner stores for a user (one per user, gone with the user).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('user')
    .addColumn('ignore_ip_whitelisting', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('call_filter')
    .addColumn('user_uuid', 'text', (c) => c.primaryKey().references('user.uuid').onDelete('cascade'))
    .addColumn('filter', 'text', (c) => c.notNull())
    .addColumn('operators', 'integer', (c) => c.notNull())
    .addColumn('updated', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('call_filter').execute();
  await db.schema.alterTable('user').dropColumn('ignore_ip_whitelisting').execute();
}
