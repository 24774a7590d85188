/**
 * Webhook subscriptions of users and partners and each one's delivery log (decisions.md "Event
 * transports"): the log keeps the events not yet delivered, in order; `cursor` is the next to send.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('events', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('next_seq', 'bigint', (c) => c.notNull())
    .addColumn('cursor', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('retry_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_owner').on('webhook').column('owner').execute();
  await db.schema
    .createTable('webhook_event')
    .addColumn('webhook', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_event_pk', ['webhook', 'seq'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_event').execute();
  await db.schema.dropTable('webhook').execute();
}
