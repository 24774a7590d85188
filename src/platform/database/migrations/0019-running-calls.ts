/**
 * Calls in progress: every leg the call engine carries is a row here from
 * its start until its CDR is written, so that a restart, or a node that died, leaves no call
 * without its record. `node` names the engine instance, `heartbeat` (ms) is refreshed for all
 * of a node's legs while it runs; dates are ms as the CDR's.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('running_call')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('owner', 'text')
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('phone', 'text')
    .addColumn('parent', 'text')
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addColumn('answered', 'bigint')
    .addColumn('heartbeat', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('running_call_node').on('running_call').column('node').execute();
  await db.schema.createIndex('running_call_heartbeat').on('running_call').column('heartbeat').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('running_call').execute();
}
