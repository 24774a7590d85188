/**
 * CSP packets of a protocol the server does not know (firmware newer than the server) are taken
 * and counted per device, not refused: one counter per device, so they keep nothing else.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('device')
    .addColumn('unknown_packets', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('device').dropColumn('unknown_packets').execute();
}
