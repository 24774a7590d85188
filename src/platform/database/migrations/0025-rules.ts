/**
 * Rules (spec "Rules", "Rule activity"): a user's state machines with their definition (edges as
 * JSON), activity, current state and the instants the engine needs (entered, enabled, next wake).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rule')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('time_zone', 'text', (c) => c.notNull())
    .addColumn('initial_state', 'text', (c) => c.notNull())
    .addColumn('edges', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('since', 'bigint', (c) => c.notNull())
    .addColumn('enabled', 'bigint', (c) => c.notNull())
    .addColumn('next_wake', 'bigint')
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rule_owner').on('rule').columns(['owner', 'sort_key']).execute();
  await db.schema.createIndex('rule_wake').on('rule').columns(['active', 'next_wake']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rule').execute();
}
