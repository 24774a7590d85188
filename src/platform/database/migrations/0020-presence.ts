/**
 * BLF (spec "SIP accounts", POST /api/sip/{sip-user}/blf): the tables of
 * Kamailio's presence and pua modules (their schema versions: presentity 5, active_watchers 12,
 * watchers 3, pua 7), written and read by Kamailio only. Zentrale owns and migrates them like
 * `location` (migration 0009) so that every node's Kamailio shares them on PostgreSQL.
 * db_sqlite maps declared type names, so the types are spelled as Kamailio's schema has them.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  const id = sql.raw(pg ? 'id SERIAL PRIMARY KEY NOT NULL' : 'id INTEGER PRIMARY KEY NOT NULL');
  const blob = sql.raw(pg ? 'BYTEA' : 'BLOB');
  await sql`CREATE TABLE presentity (
    ${id},
    username VARCHAR(64) NOT NULL,
    domain VARCHAR(64) NOT NULL,
    event VARCHAR(64) NOT NULL,
    etag VARCHAR(128) NOT NULL,
    expires INTEGER NOT NULL,
    received_time INTEGER NOT NULL,
    body ${blob} NOT NULL,
    sender VARCHAR(255) NOT NULL,
    priority INTEGER DEFAULT 0 NOT NULL,
    ruid VARCHAR(64),
    CONSTRAINT presentity_presentity_idx UNIQUE (username, domain, event, etag),
    CONSTRAINT presentity_ruid_idx UNIQUE (ruid))`.execute(db);
  await sql`CREATE INDEX presentity_presentity_expires ON presentity (expires)`.execute(db);
  await sql`CREATE INDEX presentity_account_idx ON presentity (username, domain, event)`.execute(db);

  await sql`CREATE TABLE active_watchers (
    ${id},
    presentity_uri VARCHAR(255) NOT NULL,
    watcher_username VARCHAR(64) NOT NULL,
    watcher_domain VARCHAR(64) NOT NULL,
    to_user VARCHAR(64) NOT NULL,
    to_domain VARCHAR(64) NOT NULL,
    event VARCHAR(64) DEFAULT 'presence' NOT NULL,
    event_id VARCHAR(64),
    to_tag VARCHAR(128) NOT NULL,
    from_tag VARCHAR(128) NOT NULL,
    callid VARCHAR(255) NOT NULL,
    local_cseq INTEGER NOT NULL,
    remote_cseq INTEGER NOT NULL,
    contact VARCHAR(255) NOT NULL,
    record_route TEXT,
    expires INTEGER NOT NULL,
    status INTEGER DEFAULT 2 NOT NULL,
    reason VARCHAR(64),
    version INTEGER DEFAULT 0 NOT NULL,
    socket_info VARCHAR(64) NOT NULL,
    local_contact VARCHAR(255) NOT NULL,
    from_user VARCHAR(64) NOT NULL,
    from_domain VARCHAR(64) NOT NULL,
    updated INTEGER NOT NULL,
    updated_winfo INTEGER NOT NULL,
    flags INTEGER DEFAULT 0 NOT NULL,
    user_agent VARCHAR(255) DEFAULT '',
    CONSTRAINT active_watchers_active_watchers_idx UNIQUE (callid, to_tag, from_tag))`.execute(db);
  await sql`CREATE INDEX active_watchers_active_watchers_expires ON active_watchers (expires)`.execute(db);
  await sql`CREATE INDEX active_watchers_active_watchers_pres ON active_watchers (presentity_uri, event)`.execute(
    db,
  );
  await sql`CREATE INDEX active_watchers_updated_idx ON active_watchers (updated)`.execute(db);
  await sql`CREATE INDEX active_watchers_updated_winfo_idx ON active_watchers (updated_winfo, presentity_uri)`.execute(
    db,
  );

  await sql`CREATE TABLE watchers (
    ${id},
    presentity_uri VARCHAR(255) NOT NULL,
    watcher_username VARCHAR(64) NOT NULL,
    watcher_domain VARCHAR(64) NOT NULL,
    event VARCHAR(64) DEFAULT 'presence' NOT NULL,
    status INTEGER NOT NULL,
    reason VARCHAR(64),
    inserted_time INTEGER NOT NULL,
    CONSTRAINT watchers_watcher_idx UNIQUE (presentity_uri, watcher_username, watcher_domain, event))`.execute(
    db,
  );

  await sql`CREATE TABLE pua (
    ${id},
    pres_uri VARCHAR(255) NOT NULL,
    pres_id VARCHAR(255) NOT NULL,
    event INTEGER NOT NULL,
    expires INTEGER NOT NULL,
    desired_expires INTEGER NOT NULL,
    flag INTEGER NOT NULL,
    etag VARCHAR(128) NOT NULL,
    tuple_id VARCHAR(64),
    watcher_uri VARCHAR(255) NOT NULL,
    call_id VARCHAR(255) NOT NULL,
    to_tag VARCHAR(128) NOT NULL,
    from_tag VARCHAR(128) NOT NULL,
    cseq INTEGER NOT NULL,
    record_route TEXT,
    contact VARCHAR(255) NOT NULL,
    remote_contact VARCHAR(255) NOT NULL,
    version INTEGER NOT NULL,
    extra_headers TEXT NOT NULL,
    CONSTRAINT pua_pua_idx UNIQUE (etag, tuple_id, call_id, from_tag))`.execute(db);
  await sql`CREATE INDEX pua_expires_idx ON pua (expires)`.execute(db);
  await sql`CREATE INDEX pua_dialog1_idx ON pua (pres_id, pres_uri)`.execute(db);
  await sql`CREATE INDEX pua_dialog2_idx ON pua (call_id, from_tag)`.execute(db);
  await sql`CREATE INDEX pua_record_idx ON pua (pres_id)`.execute(db);

  await sql`INSERT INTO version (table_name, table_version) VALUES
    ('presentity', 5), ('active_watchers', 12), ('watchers', 3), ('pua', 7)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM version WHERE table_name IN ('presentity', 'active_watchers', 'watchers', 'pua')`.execute(
    db,
  );
  for (const table of ['pua', 'watchers', 'active_watchers', 'presentity'])
    await sql`DROP TABLE ${sql.raw(table)}`.execute(db);
}
