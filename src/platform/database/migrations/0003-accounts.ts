/**
 * Accounts (spec "Session and sign-up", "User", internal idcardcheck API): the profile fields
 * of the user object, and what sign-up, password recovery, e-mail change and address
 * validation keep between calls. Keys, codes and captcha answers are stored only as hashes.
 */
import type { Kysely } from 'kysely';

const USER_TEXT_COLUMNS = [
  'birthday',
  'zip_code',
  'town',
  'street',
  'house_number',
  'country',
  'area_code',
  'fax_ident',
  'fax_header',
  'pin_hash',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite adds one column per ALTER TABLE.
  for (const column of USER_TEXT_COLUMNS) {
    await db.schema.alterTable('user').addColumn(column, 'text').execute();
  }
  await db.schema
    .alterTable('user')
    .addColumn('validation', 'text', (c) => c.notNull().defaultTo('incomplete'))
    .execute();
  await db.schema
    .alterTable('user')
    .addColumn('picture', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  // A sign-up verification key: user-style (e-mail), partner-controlled or by hardware code.
  await db.schema
    .createTable('signup_verification')
    .addColumn('key_hash', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('user_uuid', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('partner_uuid', 'text', (c) => c.references('partner.uuid').onDelete('cascade'))
    .addColumn('info', 'text')
    .addColumn('created', 'bigint', (c) => c.notNull())
    .addColumn('expires', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('signup_verification_expires')
    .on('signup_verification')
    .column('expires')
    .execute();

  // Password recovery and e-mail change codes: single use, with an expiry.
  await db.schema
    .createTable('account_code')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('email', 'text')
    .addColumn('created', 'bigint', (c) => c.notNull())
    .addColumn('expires', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('account_code_user')
    .on('account_code')
    .columns(['user_uuid', 'purpose'])
    .execute();

  // The captcha a session was last served and has not used yet.
  await db.schema
    .createTable('signup_captcha')
    .addColumn('session_did', 'text', (c) => c.primaryKey().references('session.did').onDelete('cascade'))
    .addColumn('answer_hash', 'text', (c) => c.notNull())
    .addColumn('expires', 'bigint', (c) => c.notNull())
    .execute();

  // An uploaded id card waiting for the internal idcardcheck API.
  await db.schema
    .createTable('idcard_job')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('idcard_job_user').on('idcard_job').column('user_uuid').execute();

  // Wrong answers (captcha, keys, codes, passwords) per session or account and time window.
  await db.schema
    .createTable('throttle')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('throttle_pk', ['scope', 'subject'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['throttle', 'idcard_job', 'signup_captcha', 'account_code', 'signup_verification']) {
    await db.schema.dropTable(table).execute();
  }
  for (const column of [...USER_TEXT_COLUMNS, 'validation', 'picture']) {
    await db.schema.alterTable('user').dropColumn(column).execute();
  }
}
