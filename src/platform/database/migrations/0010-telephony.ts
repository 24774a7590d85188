/**
 * Telephony records: call detail records (spec "Call detail record (CDR)") written
 * by the call engine and read by the partner API, and the BLF subscriptions of SIP accounts
 * (spec "SIP accounts", POST /api/sip/{sip-user}/blf), kept for when usergroups exist.
 *
 * A CDR outlives its user and partner (their columns become null): records of calls are
 * history. `date` is in ms (Conventions 6); `time` is the same instant in seconds for the
 * standard paging (`from`/`to`), `sort_key` orders by the id's embedded time. Lists page by
 * phone, by owner or by partner, newest or oldest first, so each has its own index ending in
 * sort_key; `root` finds a call's whole group.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cdr')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('fax_id', 'text')
    .addColumn('recording_id', 'text')
    .addColumn('conference_id', 'text')
    .addColumn('a_number', 'text')
    .addColumn('b_number', 'text')
    .addColumn('parent', 'text')
    .addColumn('root', 'text', (c) => c.notNull())
    .addColumn('t_pre', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('t_post', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('page_count', 'integer')
    .addColumn('phone', 'text')
    .addColumn('owner', 'text', (c) => c.references('user.uuid').onDelete('set null'))
    .addColumn('partner', 'text', (c) => c.references('partner.uuid').onDelete('set null'))
    .execute();
  await db.schema.createIndex('cdr_phone').on('cdr').columns(['phone', 'sort_key']).execute();
  await db.schema.createIndex('cdr_owner').on('cdr').columns(['owner', 'sort_key']).execute();
  await db.schema.createIndex('cdr_partner').on('cdr').columns(['partner', 'sort_key']).execute();
  await db.schema.createIndex('cdr_root').on('cdr').column('root').execute();

  await db.schema
    .createTable('sip_blf')
    .addColumn('account', 'text', (c) => c.notNull().references('sip_account.uuid').onDelete('cascade'))
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('created', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('sip_blf_pk', ['account', 'number'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sip_blf').execute();
  await db.schema.dropTable('cdr').execute();
}
