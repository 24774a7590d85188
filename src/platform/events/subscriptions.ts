/**
 * What the event subscriptions of sessions share (GET /api/call/event, GET /api/partner/*\/event,
 * GET /api/conference/{uuid}/event): each is a table of rows keyed by the session's `did` with an
 * `expires` (ms), kept until it expires or its session is gone.
 */
import { sql } from 'kysely';
import type { Db } from '../database/database.js';

/** Tables of session subscriptions (each area declares its own table). */
export type SubscriptionTable =
  | 'call_event_subscription'
  | 'partner_subscription'
  | 'conference_subscription';

/** Deletes the subscriptions of `table` that expired by `now` (ms), or whose session is gone. */
export async function deleteEndedSubscriptions(db: Db, table: SubscriptionTable, now: number): Promise<void> {
  await sql`delete from ${sql.table(table)} where expires <= ${now}
    or not exists (select 1 from session where session.did = ${sql.ref(`${table}.did`)})`.execute(db);
}
