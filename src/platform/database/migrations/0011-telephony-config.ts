/**
 * Telephony configuration (spec "Dialplan v2", "IVR", "Legacy dialplan and call features"):
 * v2 dialplans and IVRs of a user (the checked body kept as JSON), the legacy dialplan (one per
 * user), and the call features as state the call engine carries out: the pending call-through
 * (one per user), the pending callback request (one per user) and the signalled call-reverse.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['dialplan', 'ivr']) {
    await db.schema
      .createTable(table)
      .addColumn('uuid', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('time', 'integer', (c) => c.notNull())
      .addColumn('sort_key', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex(`${table}_owner`).on(table).columns(['owner', 'sort_key']).execute();
  }
  await db.schema
    .createTable('legacy_dialplan')
    .addColumn('user_uuid', 'text', (c) => c.primaryKey().references('user.uuid').onDelete('cascade'))
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('callthrough')
    .addColumn('user_uuid', 'text', (c) => c.primaryKey().references('user.uuid').onDelete('cascade'))
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('filter', 'text')
    .addColumn('expires', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('callback_request')
    .addColumn('user_uuid', 'text', (c) => c.primaryKey().references('user.uuid').onDelete('cascade'))
    .addColumn('from_phone', 'text', (c) => c.notNull())
    .addColumn('to_phone', 'text', (c) => c.notNull())
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('clip_number', 'text')
    .addColumn('clir', 'integer', (c) => c.notNull())
    .addColumn('created', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('callreverse')
    .addColumn('user_uuid', 'text', (c) => c.primaryKey().references('user.uuid').onDelete('cascade'))
    .addColumn('phone_from', 'text', (c) => c.notNull())
    .addColumn('phone_to', 'text', (c) => c.notNull())
    .addColumn('filter', 'text')
    .addColumn('started', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'callreverse',
    'callback_request',
    'callthrough',
    'legacy_dialplan',
    'ivr',
    'dialplan',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
