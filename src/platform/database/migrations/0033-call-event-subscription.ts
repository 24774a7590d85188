/**
 * Sessions subscribed to their user's call events (GET /api/call/event): one row per session
 * until the subscription ends, so that a node's restart gives its sessions their subscriptions back.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('call_event_subscription')
    .addColumn('did', 'text', (c) => c.primaryKey())
    .addColumn('expires', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('call_event_subscription').execute();
}
