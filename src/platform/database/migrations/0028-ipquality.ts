/**
 * ipquality (spec "ipquality", "ipquality result"): the measurement parameters and schedule of
 * each ipquality object (the object row itself lives in the object store), and its results.
 * `next_run` (ms) is when the next measurement is due; `lease_until`/`lease` mark a measurement
 * a node runs, so that of several nodes one runs it and a node that died is noticed.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ipquality')
    .addColumn('uuid', 'text', (c) => c.primaryKey().references('object.uuid').onDelete('cascade'))
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('destination', 'text')
    .addColumn('interval', 'integer', (c) => c.notNull())
    .addColumn('duration', 'integer', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('dscp', 'integer', (c) => c.notNull())
    .addColumn('ptime', 'integer', (c) => c.notNull())
    .addColumn('psize', 'integer', (c) => c.notNull())
    .addColumn('next_run', 'bigint')
    .addColumn('lease', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('run_start', 'bigint')
    .execute();
  await db.schema.createIndex('ipquality_due').on('ipquality').columns(['active', 'next_run']).execute();
  await db.schema.createIndex('ipquality_lease').on('ipquality').column('lease_until').execute();
  await db.schema
    .createTable('ipquality_result')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('ipquality', 'text', (c) => c.notNull().references('ipquality.uuid').onDelete('cascade'))
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('duration', 'integer', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();
  await db.schema
    .createIndex('ipquality_result_key')
    .on('ipquality_result')
    .columns(['ipquality', 'sort_key'])
    .execute();
  await db.schema
    .createIndex('ipquality_result_time')
    .on('ipquality_result')
    .columns(['ipquality', 'time'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('ipquality_result').execute();
  await db.schema.dropTable('ipquality').execute();
}
