/**
 * Documents (spec "Fax", "Recording", "Announcement"): fax, recording and announcement are
 * objects of the object store with their content in content storage; what they need beyond
 * that is the fax's reports (Resources "Fax": report entries, keyed by report UUID, ordered by
 * time). A report goes with its fax when the fax is purged.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fax_report')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('fax', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('incoming', 'integer', (c) => c.notNull())
    .addColumn('from_number', 'text', (c) => c.notNull())
    .addColumn('to_number', 'text', (c) => c.notNull())
    .addColumn('time_start', 'bigint', (c) => c.notNull())
    .addColumn('time_end', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('sip_status_code', 'integer')
    .addColumn('fax_error_code', 'integer')
    // Shown only in the report PDF: what the transmission carried.
    .addColumn('page_count', 'integer')
    .addColumn('fax_ident', 'text')
    .addColumn('fax_header', 'text')
    .execute();
  await db.schema
    .createIndex('fax_report_fax')
    .on('fax_report')
    .columns(['fax', 'time_start', 'sort_key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('fax_report').execute();
}
