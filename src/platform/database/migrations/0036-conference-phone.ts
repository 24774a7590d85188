/** The numbers that dial into each conference (spec `/api/conference`; decisions.md "Conferences"). */
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
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('conference_phone').execute();
}
