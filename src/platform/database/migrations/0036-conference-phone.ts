/**
 * The numbers that dial into each conference, and the sessions subscribed to a conference's
 * events (spec `/api/conference`, GET /api/conference/{uuid}/event; decisions.md "Conferences").
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('conference_phone')
    .addColumn('phone', 'text', (c) => c.primaryKey())
    .addColumn('conference', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('conference_phone_conference')
    .on('conference_phone')
    .column('conference')
    .execute();
  await db.schema
    .createTable('conference_subscription')
    .addColumn('did', 'text', (c) => c.notNull())
    .addColumn('conference', 'text', (c) => c.notNull())
    .addColumn('expires', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('conference_subscription_pk', ['did', 'conference'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('conference_subscription').execute();
  await db.schema.dropTable('conference_phone').execute();
}
