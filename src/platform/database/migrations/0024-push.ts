/**
 * Push (spec "Push registration"): the devices' registrations, the
 * FCM service-account credential (sealed) and the durable queue of deliveries.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('push_registration')
    .addColumn('system', 'text', (c) => c.notNull())
    .addColumn('device_token', 'text', (c) => c.notNull())
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('application_id', 'text')
    .addColumn('sandbox', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('apns_topic', 'text')
    .addColumn('created', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('push_registration_pk', ['system', 'device_token'])
    .execute();
  await db.schema
    .createIndex('push_registration_user')
    .on('push_registration')
    .columns(['user_uuid', 'created'])
    .execute();

  await db.schema
    .createTable('push_fcm_credential')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('client_email', 'text', (c) => c.notNull())
    /** The service-account JSON, sealed (src/platform/sealing.ts). */
    .addColumn('credentials', 'text', (c) => c.notNull())
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('push_delivery')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('system', 'text', (c) => c.notNull())
    .addColumn('device_token', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    /** Milliseconds since epoch: when the next attempt is due. */
    .addColumn('due', 'bigint', (c) => c.notNull())
    /** Milliseconds since epoch until which a node holds the row (0: nobody). */
    .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('push_delivery_due').on('push_delivery').columns(['due']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('push_delivery').execute();
  await db.schema.dropTable('push_fcm_credential').execute();
  await db.schema.dropTable('push_registration').execute();
}
