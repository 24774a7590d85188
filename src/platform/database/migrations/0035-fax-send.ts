/**
 * Sending faxes (spec "Fax", POST /api/fax/{uuid}/send; decisions.md "Sending faxes"): the
 * queue of transmissions, one row per outgoing report until it ended, and the fax pages each
 * user sent per calendar month (feature.used.fax, quota.fax).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fax_job')
    /** The outgoing report's UUID. */
    .addColumn('report', 'text', (c) => c.primaryKey().references('fax_report.uuid').onDelete('cascade'))
    .addColumn('fax', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('owner', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('from_number', 'text', (c) => c.notNull())
    .addColumn('to_number', 'text', (c) => c.notNull())
    .addColumn('fax_ident', 'text', (c) => c.notNull())
    .addColumn('fax_header', 'text', (c) => c.notNull())
    /** The content version sent (the fax's pages when the send was accepted). */
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('page_count', 'integer', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    /** Milliseconds since epoch: when the next attempt may start. */
    .addColumn('due', 'bigint', (c) => c.notNull())
    /** The node running the attempt, and until when (ms) it holds the row; renewed while it runs. */
    .addColumn('lease_node', 'text')
    .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('fax_job_due').on('fax_job').columns(['due']).execute();
  await db.schema.createIndex('fax_job_owner').on('fax_job').columns(['owner']).execute();

  await db.schema
    .createTable('fax_usage')
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    /** The calendar month in the user's time zone, YYYY-MM. */
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('pages', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('fax_usage_pk', ['user_uuid', 'month'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('fax_usage').execute();
  await db.schema.dropTable('fax_job').execute();
}
