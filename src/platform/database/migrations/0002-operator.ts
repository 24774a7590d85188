/**
 * Operator CLI (decisions.md "Deployment contract"): hardware codes get a UUID, so that the
 * operator can name one (to delete it) without the code itself, of which only a hash is kept.
 */
import { type Kysely, sql } from 'kysely';
import { newUuid } from '../../ids.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('hardware_code').addColumn('uuid', 'text').execute();
  const rows = await sql<{ code_hash: string }>`SELECT code_hash FROM hardware_code`.execute(db);
  for (const row of rows.rows) {
    await sql`UPDATE hardware_code SET uuid = ${newUuid()} WHERE code_hash = ${row.code_hash}`.execute(db);
  }
  await db.schema.createIndex('hardware_code_uuid').on('hardware_code').column('uuid').unique().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('hardware_code_uuid').execute();
  await db.schema.alterTable('hardware_code').dropColumn('uuid').execute();
}
