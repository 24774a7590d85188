/**
 * The live rule engine (spec "Rules"; Zentrale's trace extension): the sensors each rule reads
 * (so that a sensor value finds its rules), whether the next look is an entry look, the last 100
 * transitions of each rule, and the actions of those transitions waiting to run or done (the
 * durable outbox: actions are neither lost nor repeated across restarts and nodes).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('rule')
    .addColumn('look', 'text', (c) => c.notNull().defaultTo('timer'))
    .execute();
  await db.schema
    .alterTable('rule')
    .addColumn('trace_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('rule_sensor')
    .addColumn('rule', 'text', (c) => c.notNull().references('rule.uuid').onDelete('cascade'))
    .addColumn('sensor', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('rule_sensor_pk', ['sensor', 'rule'])
    .execute();
  await db.schema.createIndex('rule_sensor_rule').on('rule_sensor').column('rule').execute();
  await db.schema
    .createTable('rule_trace')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('rule', 'text', (c) => c.notNull().references('rule.uuid').onDelete('cascade'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('cause', 'text', (c) => c.notNull())
    .addColumn('sensor', 'text')
    .addColumn('from_state', 'text', (c) => c.notNull())
    .addColumn('to_state', 'text', (c) => c.notNull())
    .addColumn('edge', 'integer', (c) => c.notNull())
    .addColumn('conditions', 'text', (c) => c.notNull())
    .addColumn('actions', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rule_trace_seq').on('rule_trace').columns(['rule', 'seq']).execute();
  await db.schema
    .createTable('rule_action')
    .addColumn('trace', 'text', (c) => c.notNull().references('rule_trace.uuid').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_try', 'bigint')
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('rule_action_pk', ['trace', 'position'])
    .execute();
  await db.schema.createIndex('rule_action_due').on('rule_action').columns(['result', 'next_try']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rule_action').execute();
  await db.schema.dropTable('rule_trace').execute();
  await db.schema.dropTable('rule_sensor').execute();
  await db.schema.alterTable('rule').dropColumn('trace_seq').execute();
  await db.schema.alterTable('rule').dropColumn('look').execute();
}
