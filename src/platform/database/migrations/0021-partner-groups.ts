/**
 * Partner API (spec "Partner API", and the routes it lists without shapes): the partner's
 * enterprise settings, usergroups with their members (one group per user, an extension each),
 * credit, call limit and zone filter, emergency data per user, and caller names (cnam) of users
 * and groups. A deleted user leaves everything here behind (cascade); a group with members
 * cannot be deleted (no cascade from the member rows: not-empty is checked first).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('partner_enterprise')
    .addColumn('partner_uuid', 'text', (c) => c.primaryKey().references('partner.uuid').onDelete('cascade'))
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('group_prefix_enable', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('usergroup')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('partner_uuid', 'text', (c) => c.notNull().references('partner.uuid').onDelete('cascade'))
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('prefix', 'integer', (c) => c.notNull())
    .addColumn('credit', 'bigint', (c) => c.notNull())
    .addColumn('call_limit', 'integer', (c) => c.notNull())
    .addColumn('zonefilter', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('usergroup_partner')
    .on('usergroup')
    .columns(['partner_uuid', 'sort_key'])
    .execute();
  // A prefix (1..9) is unique among a partner's groups, also against two calls at once.
  await db.schema
    .createIndex('usergroup_prefix')
    .unique()
    .on('usergroup')
    .columns(['partner_uuid', 'prefix'])
    .where(sql.ref('prefix'), '<>', 0)
    .execute();
  await db.schema
    .createTable('usergroup_member')
    .addColumn('user_uuid', 'text', (c) => c.primaryKey().references('user.uuid').onDelete('cascade'))
    .addColumn('usergroup_uuid', 'text', (c) => c.notNull().references('usergroup.uuid'))
    .addColumn('extension', 'text')
    .addColumn('added', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('usergroup_member_group')
    .on('usergroup_member')
    .columns(['usergroup_uuid', 'user_uuid'])
    .execute();
  // Several members without an extension are fine: NULLs are distinct on both databases.
  await db.schema
    .createIndex('usergroup_member_extension')
    .unique()
    .on('usergroup_member')
    .columns(['usergroup_uuid', 'extension'])
    .execute();
  await db.schema
    .createTable('emergency_data')
    .addColumn('user_uuid', 'text', (c) => c.primaryKey().references('user.uuid').onDelete('cascade'))
    .addColumn('uui_header', 'text')
    .addColumn('emergency_police', 'text')
    .addColumn('emergency_rescue', 'text')
    .execute();
  await db.schema
    .createTable('user_cnam')
    .addColumn('user_uuid', 'text', (c) => c.primaryKey().references('user.uuid').onDelete('cascade'))
    .addColumn('cnam', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('usergroup_cnam')
    .addColumn('usergroup_uuid', 'text', (c) =>
      c.primaryKey().references('usergroup.uuid').onDelete('cascade'),
    )
    .addColumn('cnam', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'usergroup_cnam',
    'user_cnam',
    'emergency_data',
    'usergroup_member',
    'usergroup',
    'partner_enterprise',
  ])
    await db.schema.dropTable(table).execute();
}
