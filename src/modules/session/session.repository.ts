/** Storage of sessions, so that they survive a restart of their node. One query per function. */
import { sql } from 'kysely';
import type { Db } from '../../platform/database/database.js';

export interface SessionTable {
  did: string;
  server: string;
  kind: string;
  user_uuid: string | null;
  partner_uuid: string | null;
  device_uuid: string | null;
  language: string;
  origin: string | null;
  address: string;
  created: number;
  last_seen: number;
  next_event: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    session: SessionTable;
  }
}

export function insertSession(db: Db, row: SessionTable): Promise<unknown> {
  return db.insertInto('session').values(row).execute();
}

export function updateSession(db: Db, did: string, changes: Partial<SessionTable>): Promise<unknown> {
  return db.updateTable('session').set(changes).where('did', '=', did).execute();
}

/** A copy of a session's row under a new did (the old row is deleted next). */
export function copySession(db: Db, did: string, newDid: string): Promise<unknown> {
  const columns = [
    'server',
    'kind',
    'user_uuid',
    'partner_uuid',
    'device_uuid',
    'language',
    'origin',
    'address',
    'created',
    'last_seen',
    'next_event',
  ] as const;
  return db
    .insertInto('session')
    .columns(['did', ...columns])
    .expression((eb) =>
      eb
        .selectFrom('session')
        .select((s) => [s.val(newDid).as('did'), ...columns])
        .where('did', '=', did),
    )
    .execute();
}

export function deleteSession(db: Db, did: string): Promise<unknown> {
  return db.deleteFrom('session').where('did', '=', did).execute();
}

/** Sessions of this node still within their idle time. */
export function listLiveSessions(db: Db, server: string, seenAfter: number): Promise<SessionTable[]> {
  return db
    .selectFrom('session')
    .selectAll()
    .where('server', '=', server)
    .where('last_seen', '>', seenAfter)
    .execute();
}

/** The ids of this node's stored sessions. */
export async function listSessionIds(db: Db, server: string): Promise<string[]> {
  const rows = await db.selectFrom('session').select('did').where('server', '=', server).execute();
  return rows.map((row) => row.did);
}

export function deleteIdleSessions(db: Db, server: string, seenBefore: number): Promise<unknown> {
  return db.deleteFrom('session').where('server', '=', server).where('last_seen', '<=', seenBefore).execute();
}

export function deleteUserSessions(db: Db, userUuid: string, keepDid?: string): Promise<unknown> {
  let query = db.deleteFrom('session').where('user_uuid', '=', userUuid);
  if (keepDid !== undefined) query = query.where('did', '!=', keepDid);
  return query.execute();
}

/** Closes every session of a device but the one given (a new device session replaces the old). */
export function listDeviceSessions(db: Db, deviceUuid: string): Promise<{ did: string; server: string }[]> {
  return db.selectFrom('session').select(['did', 'server']).where('device_uuid', '=', deviceUuid).execute();
}

/** A session's stored events follow it to its new did (renewSid). */
export function moveSessionEvents(db: Db, did: string, newDid: string): Promise<unknown> {
  return db.updateTable('session_event').set({ did: newDid }).where('did', '=', did).execute();
}

/** Raises each session's next_event past its highest stored event id. */
export function raiseNextEvent(db: Db): Promise<unknown> {
  const highest = sql<number>`(SELECT MAX(e.id) FROM session_event e WHERE e.did = session.did)`;
  return db
    .updateTable('session')
    .set({ next_event: sql`${highest} + 1` })
    .where(sql<boolean>`next_event <= ${highest}`)
    .execute();
}

/**
 * Deletes stored events created before `before` (ms), beyond the newest `keep` of a session,
 * or of sessions that no longer exist.
 */
export function deleteOldSessionEvents(db: Db, before: number, keep: number): Promise<unknown> {
  return db
    .deleteFrom('session_event')
    .where(
      sql<boolean>`created < ${before}
        OR id < (SELECT s.next_event - ${keep} FROM session s WHERE s.did = session_event.did)
        OR NOT EXISTS (SELECT 1 FROM session s WHERE s.did = session_event.did)`,
    )
    .execute();
}
