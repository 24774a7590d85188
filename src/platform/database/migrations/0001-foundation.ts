/**
 * Foundation schema: sessions, accounts, partners and what the operator CLI manages.
 * Times are seconds since epoch (bigint), flags 0/1 integers and structured values JSON text,
 * so that the same queries run on SQLite and PostgreSQL.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('session')
    .addColumn('did', 'text', (c) => c.primaryKey())
    .addColumn('server', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('user_uuid', 'text')
    .addColumn('partner_uuid', 'text')
    .addColumn('device_uuid', 'text')
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('origin', 'text')
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('created', 'bigint', (c) => c.notNull())
    .addColumn('last_seen', 'bigint', (c) => c.notNull())
    .addColumn('next_event', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('events', 'text')
    .execute();
  await db.schema.createIndex('session_server').on('session').columns(['server', 'last_seen']).execute();

  await db.schema
    .createTable('partner')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('rights', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('user')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('username_key', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text')
    .addColumn('email_key', 'text', (c) => c.unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('firstname', 'text', (c) => c.notNull())
    .addColumn('lastname', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('country_code', 'text', (c) => c.notNull())
    .addColumn('newsletter', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('partner_uuid', 'text', (c) => c.references('partner.uuid'))
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_partner').on('user').columns(['partner_uuid', 'created']).execute();

  await db.schema
    .createTable('feature_pack')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('quota', 'text', (c) => c.notNull())
    .addColumn('feature', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('user_feature_pack')
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('pack', 'text', (c) => c.notNull().references('feature_pack.name').onDelete('cascade'))
    .addPrimaryKeyConstraint('user_feature_pack_pk', ['user_uuid', 'pack'])
    .execute();

  await db.schema
    .createTable('hardware_code')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('device')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('owner_uuid', 'text', (c) => c.references('user.uuid').onDelete('set null'))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('internal_permission')
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('permission', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('internal_permission_pk', ['user_uuid', 'permission'])
    .execute();

  await db.schema
    .createTable('phone_number')
    .addColumn('number', 'text', (c) => c.primaryKey())
    .addColumn('user_uuid', 'text', (c) => c.references('user.uuid').onDelete('set null'))
    .addColumn('partner_uuid', 'text', (c) => c.references('partner.uuid').onDelete('set null'))
    .addColumn('locked', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('phone_number_user').on('phone_number').column('user_uuid').execute();

  await db.schema
    .createTable('push_application')
    .addColumn('application_id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('event_broadcast')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();

  // decisions.md "Feature packs": the pack every new user gets out of the box.
  await sql`INSERT INTO feature_pack (name, quota, feature, is_default, created) VALUES (${'default'}, ${JSON.stringify(
    { sip: 5, volume: 100, fax: 50, calls: 2 },
  )}, ${JSON.stringify({
    fax_noad: false,
    call_unrestricted: false,
    box_enable: false,
    dialplan_enable: true,
    control_phone: false,
  })}, 1, ${Math.floor(Date.now() / 1000)})`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('the foundation schema cannot be rolled back');
}
