/**
 * CSP packets the server cannot read (spec "Device API", POST /api/device/csp): a box may run
 * firmware newer than the server, so such packets are accepted and counted, one row per device
 * and protocol type (at most 256 per device), with the last such packet (at most 500 base64
 * characters) for the operator to look at.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('csp_unknown')
    .addColumn('device_uuid', 'text', (c) => c.notNull().references('device.uuid').onDelete('cascade'))
    .addColumn('proto_type', 'integer', (c) => c.notNull())
    .addColumn('packets', 'bigint', (c) => c.notNull())
    .addColumn('first_heard', 'bigint', (c) => c.notNull())
    .addColumn('last_heard', 'bigint', (c) => c.notNull())
    .addColumn('last_packet', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('csp_unknown_pk', ['device_uuid', 'proto_type'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('csp_unknown').execute();
}
