/**
 * Durable events (decisions.md "Events"): each event is stored once when it is
 * emitted, its body in `event_body` and one `session_event` row per receiving session, instead
 * of every session's retained events as one JSON document in its row, written only at a
 * graceful stop. The events saved that way are moved over, then the column goes.
 */
import type { Kysely } from 'kysely';

interface OldSession {
  did: string;
  events: string | null;
}

interface OldEvent {
  id: number;
  event: string;
  time: number;
  [field: string]: unknown;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_body')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('event_body_created').on('event_body').column('created').execute();
  await db.schema
    .createTable('session_event')
    .addColumn('did', 'text', (c) => c.notNull())
    .addColumn('id', 'bigint', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('session_event_pk', ['did', 'id'])
    .execute();
  await db.schema.createIndex('session_event_created').on('session_event').column('created').execute();
  await db.schema.createIndex('session_event_body').on('session_event').column('body').execute();

  const old = db as unknown as Kysely<{
    session: OldSession;
    event_body: { id: string; name: string; time: number; payload: string; created: number };
    session_event: { did: string; id: number; body: string; created: number };
  }>;
  const sessions = await old
    .selectFrom('session')
    .select(['did', 'events'])
    .where('events', 'is not', null)
    .execute();
  const now = Date.now();
  let counter = 0;
  for (const session of sessions) {
    for (const { id, event, time, ...payload } of JSON.parse(session.events!) as OldEvent[]) {
      const body = `migrated-${counter++}`;
      await old
        .insertInto('event_body')
        .values({ id: body, name: event, time, payload: JSON.stringify(payload), created: now })
        .execute();
      await old.insertInto('session_event').values({ did: session.did, id, body, created: now }).execute();
    }
  }
  await db.schema.alterTable('session').dropColumn('events').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('session').addColumn('events', 'text').execute();
  await db.schema.dropTable('session_event').execute();
  await db.schema.dropTable('event_body').execute();
}
