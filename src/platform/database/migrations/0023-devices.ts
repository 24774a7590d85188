/**
 * Device API (spec "Device API", "Device task delivery"), boxes and sensors (listed without
 * a shape): a device's license, the device session each device holds (a box is online while it has one), the
 * sensors heard through CSP radio packets (sensor objects keyed by their radio address per
 * owner) and the sensors' data history.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The license the operator gives a device (zentrale-admin device set-license): the license task.
  await db.schema.alterTable('device').addColumn('license', 'text').execute();
  // One row per device that holds a device session: which session, on which node, what the
  // device reported at login, and the next task id of that session (ids survive a restart).
  await db.schema
    .createTable('device_connection')
    .addColumn('device_uuid', 'text', (c) => c.primaryKey().references('device.uuid').onDelete('cascade'))
    .addColumn('did', 'text', (c) => c.notNull())
    .addColumn('server', 'text', (c) => c.notNull())
    .addColumn('hw_version', 'text', (c) => c.notNull())
    .addColumn('sw_version', 'text', (c) => c.notNull())
    .addColumn('ip_addr', 'text', (c) => c.notNull())
    .addColumn('mac_addr', 'text', (c) => c.notNull())
    .addColumn('timeout', 'integer', (c) => c.notNull())
    .addColumn('since', 'bigint', (c) => c.notNull())
    .addColumn('next_task', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('device_connection_server').on('device_connection').column('server').execute();

  // A sensor object of an owner per radio address (protocol type and 32-bit address).
  await db.schema
    .createTable('sensor_address')
    .addColumn('sensor_uuid', 'text', (c) => c.primaryKey().references('object.uuid').onDelete('cascade'))
    .addColumn('owner_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('proto_type', 'integer', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('box_uuid', 'text')
    .addColumn('last_heard', 'bigint', (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint('sensor_address_unique', ['owner_uuid', 'proto_type', 'address'])
    .execute();

  await db.schema
    .createTable('sensor_data')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('sensor_uuid', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('box_uuid', 'text', (c) => c.notNull())
    .addColumn('packet_id', 'integer', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('rssi', 'integer', (c) => c.notNull())
    .addColumn('lqi', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sensor_data_sensor')
    .on('sensor_data')
    .columns(['sensor_uuid', 'sort_key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sensor_data').execute();
  await db.schema.dropTable('sensor_address').execute();
  await db.schema.dropTable('device_connection').execute();
  await db.schema.alterTable('device').dropColumn('license').execute();
}
