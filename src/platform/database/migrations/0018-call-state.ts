/**
 * Call state shared by the nodes (several nodes "each node's engine shares the
 * database"): `dialplan_cyclic`, the round-robin position of each v2 dialplan's cyclic action
 * (spec "cyclic (round-robin kept per dialplan)"), and `call_admission`, one row per call the
 * concurrent-call quota admitted, from its admission until it ends (`node` the engine instance,
 * `heartbeat` in ms refreshed while the node runs, as `running_call`).
 *
 * On PostgreSQL, `call_admit` admits a call in one statement: it takes a transaction-scoped
 * advisory lock per usergroup and per user, counts the live admissions and inserts the new one
 * only below the quotas. A VOLATILE PL/pgSQL function runs each of its queries with a fresh
 * snapshot, so the count sees every admission committed before the lock was granted; a plain
 * `INSERT ... SELECT ... WHERE count < quota` would count from the statement's start snapshot
 * and let two nodes pass together.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('dialplan_cyclic')
    .addColumn('dialplan', 'text', (c) => c.notNull().references('dialplan.uuid').onDelete('cascade'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('dialplan_cyclic_key', ['dialplan', 'action'])
    .execute();
  await db.schema
    .createTable('call_admission')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('heartbeat', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('call_admission_owner')
    .on('call_admission')
    .columns(['owner', 'heartbeat'])
    .execute();
  await db.schema.createIndex('call_admission_node').on('call_admission').column('node').execute();
  if (isPostgres(db)) {
    await sql`CREATE FUNCTION call_admit(
        p_id text, p_node text, p_owner text, p_limit bigint,
        p_group text, p_members text[], p_group_limit bigint,
        p_alive bigint, p_now bigint) RETURNS boolean
      LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        -- An admission lives as long as its call: its commit need not wait for the disk (a
        -- database crash loses at most the last few, which the calls' legs outlive anyway).
        PERFORM set_config('synchronous_commit', 'off', true);
        -- The group's lock before the user's, always: no two admissions wait for each other.
        IF p_group IS NOT NULL THEN
          PERFORM pg_advisory_xact_lock(hashtextextended('call_admission:' || p_group, 0));
        END IF;
        PERFORM pg_advisory_xact_lock(hashtextextended('call_admission:' || p_owner, 0));
        IF p_limit IS NOT NULL AND (SELECT count(*) FROM call_admission
            WHERE owner = p_owner AND heartbeat >= p_alive) >= p_limit THEN
          RETURN false;
        END IF;
        IF p_group_limit IS NOT NULL AND (SELECT count(*) FROM call_admission
            WHERE owner = ANY(p_members) AND heartbeat >= p_alive) >= p_group_limit THEN
          RETURN false;
        END IF;
        INSERT INTO call_admission (id, node, owner, heartbeat) VALUES (p_id, p_node, p_owner, p_now);
        RETURN true;
      END
      $$`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await sql`DROP FUNCTION call_admit`.execute(db);
  await db.schema.dropTable('call_admission').execute();
  await db.schema.dropTable('dialplan_cyclic').execute();
}
