/**
 * Partner event streams, event filters and the internal API (spec "Partner API", "Events",
 * "Internal API"): partner subscriptions and the stream events waiting to be claimed by a
 * subscribing session, each session's event filter, jeye reports of monitoring hosts and the
 * MWI URIs of numbers.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('partner_subscription')
    .addColumn('did', 'text', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('partner', 'text', (c) => c.notNull())
    .addColumn('expires', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('partner_subscription_pk', ['did', 'stream'])
    .execute();
  await db.schema
    .createIndex('partner_subscription_partner')
    .on('partner_subscription')
    .columns(['partner', 'stream', 'expires'])
    .execute();
  await db.schema
    .createTable('partner_stream_event')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('partner', 'text', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('partner_stream_event_claim')
    .on('partner_stream_event')
    .columns(['partner', 'stream', 'sort_key'])
    .execute();
  await db.schema
    .createTable('event_filter')
    .addColumn('did', 'text', (c) => c.primaryKey())
    .addColumn('names', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('jeye')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jeye_host').on('jeye').columns(['host', 'sort_key']).execute();
  await db.schema
    .createTable('mwi')
    .addColumn('phone', 'text', (c) => c.primaryKey())
    .addColumn('uri', 'text', (c) => c.notNull())
    .addColumn('updated', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['mwi', 'jeye', 'event_filter', 'partner_stream_event', 'partner_subscription'])
    await db.schema.dropTable(table).execute();
}
