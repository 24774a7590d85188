/**
 * SIP accounts (spec "SIP accounts"; decisions.md "The call engine") and what Kamailio reads
 * and writes in the same database: `sip_subscriber`, the view auth_db checks digests against;
 * usrloc's `location` table (Kamailio's schema version 9), and Kamailio's `version` table
 * that its modules check at start.
 *
 * `sip_account.password` is kept because GET /api/sip returns it; `ha1` = MD5(user:domain:pw)
 * and `ha1b` = MD5(user@domain:domain:pw) let Kamailio check digests without it. Zentrale
 * rewrites both on every change of password or domain (src/telephony/kamailio/credentials.ts).
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sip_account')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('password', 'text', (c) => c.notNull())
    .addColumn('ha1', 'text', (c) => c.notNull())
    .addColumn('ha1b', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sip_account_owner').on('sip_account').column('owner').execute();
  await sql`CREATE VIEW sip_subscriber AS SELECT username, domain, ha1, ha1b FROM sip_account`.execute(db);

  // Kamailio's own tables: db_sqlite maps declared types by name (INTEGER, VARCHAR, TIMESTAMP,
  // REAL), so the column types are written as Kamailio's schema has them.
  await sql`CREATE TABLE version (
    table_name VARCHAR(32) NOT NULL,
    table_version INTEGER DEFAULT 0 NOT NULL,
    CONSTRAINT version_table_name_idx UNIQUE (table_name))`.execute(db);
  const id = isPostgres(db)
    ? sql.raw('id SERIAL PRIMARY KEY NOT NULL')
    : sql.raw('id INTEGER PRIMARY KEY NOT NULL');
  await sql`CREATE TABLE location (
    ${id},
    ruid VARCHAR(64) DEFAULT '' NOT NULL,
    username VARCHAR(64) DEFAULT '' NOT NULL,
    domain VARCHAR(64) DEFAULT NULL,
    contact VARCHAR(512) DEFAULT '' NOT NULL,
    received VARCHAR(128) DEFAULT NULL,
    path VARCHAR(512) DEFAULT NULL,
    expires TIMESTAMP WITHOUT TIME ZONE DEFAULT '2030-05-28 21:32:15' NOT NULL,
    q REAL DEFAULT 1.0 NOT NULL,
    callid VARCHAR(255) DEFAULT 'Default-Call-ID' NOT NULL,
    cseq INTEGER DEFAULT 1 NOT NULL,
    last_modified TIMESTAMP WITHOUT TIME ZONE DEFAULT '2000-01-01 00:00:01' NOT NULL,
    flags INTEGER DEFAULT 0 NOT NULL,
    cflags INTEGER DEFAULT 0 NOT NULL,
    user_agent VARCHAR(255) DEFAULT '' NOT NULL,
    socket VARCHAR(64) DEFAULT NULL,
    methods INTEGER DEFAULT NULL,
    instance VARCHAR(255) DEFAULT NULL,
    reg_id INTEGER DEFAULT 0 NOT NULL,
    server_id INTEGER DEFAULT 0 NOT NULL,
    connection_id INTEGER DEFAULT 0 NOT NULL,
    keepalive INTEGER DEFAULT 0 NOT NULL,
    partition INTEGER DEFAULT 0 NOT NULL,
    CONSTRAINT location_ruid_idx UNIQUE (ruid))`.execute(db);
  await sql`CREATE INDEX location_account_contact_idx ON location (username, domain, contact)`.execute(db);
  await sql`CREATE INDEX location_expires_idx ON location (expires)`.execute(db);
  await sql`CREATE INDEX location_connection_idx ON location (server_id, connection_id)`.execute(db);
  await sql`INSERT INTO version (table_name, table_version) VALUES ('location', 9)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE location`.execute(db);
  await sql`DROP TABLE version`.execute(db);
  await sql`DROP VIEW sip_subscriber`.execute(db);
  await db.schema.dropTable('sip_account').execute();
}
