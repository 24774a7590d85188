/**
 * Content conversion jobs (pending conversions resume after a
 * restart). A job belongs to the node whose DATA_DIR holds its input; it is deleted once its
 * result has been handed to its object type.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('content_job')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('object_uuid', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('content_job_node').on('content_job').columns(['node', 'sort_key']).execute();
  await db.schema
    .createIndex('content_job_object')
    .on('content_job')
    .columns(['object_uuid', 'sort_key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('content_job').execute();
}
