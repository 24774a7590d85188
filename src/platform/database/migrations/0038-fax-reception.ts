/**
 * Receptions running (spec "Fax": a received fax is in status record while pages arrive;
 * decisions.md "Fax over the network", receiving): which node receives each, and the file its
 * pages go to, so that a node's restart finishes the receptions it left.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fax_reception')
    .addColumn('fax', 'text', (c) => c.primaryKey().references('object.uuid').onDelete('cascade'))
    /** The incoming report's UUID. */
    .addColumn('report', 'text', (c) => c.notNull().references('fax_report.uuid').onDelete('cascade'))
    .addColumn('owner', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    /** The call engine's name in the running-legs table. */
    .addColumn('node', 'text', (c) => c.notNull())
    /** The TIFF spandsp writes the pages received whole to, on that node's disk. */
    .addColumn('rx_file', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('fax_reception_node').on('fax_reception').columns(['node']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('fax_reception').execute();
}
