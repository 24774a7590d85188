/**
 * Content types (decisions.md "Content and conversion"): a conversion job names the content
 * type whose handler takes its result (fax, presentation, announcement, recording), beside the
 * converter it runs (`kind`). Jobs recorded before take the type of their object; a job whose
 * object is gone gets none, and its result is then discarded.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('content_job')
    .addColumn('type', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`UPDATE content_job SET type = COALESCE(
    (SELECT object.type FROM object WHERE object.uuid = content_job.object_uuid), '')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('content_job').dropColumn('type').execute();
}
