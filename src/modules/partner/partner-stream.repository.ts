/**
 * Storage of partner event streams (spec "Partner API": GET/DELETE /api/partner/user/event and
 * /api/partner/cdr/event; migration 0022): the subscriptions of partner sessions and the stream
 * events waiting for a subscribing session to claim them. One query per function.
 */

import type { Db } from '../../platform/database/database.js';
import { deleteEndedSubscriptions as deleteEnded } from '../../platform/events/subscriptions.js';

export type StreamKind = 'user' | 'cdr';

export interface PartnerSubscriptionTable {
  did: string;
  stream: string;
  partner: string;
  /** ms since epoch; the subscription ends then unless renewed. */
  expires: number;
}

export interface PartnerStreamEventTable {
  id: string;
  partner: string;
  stream: string;
  /** uuidSortKey(id): the order events were published in. */
  sort_key: string;
  name: string;
  payload: string;
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    partner_subscription: PartnerSubscriptionTable;
    partner_stream_event: PartnerStreamEventTable;
  }
}

export async function upsertSubscription(db: Db, row: PartnerSubscriptionTable): Promise<void> {
  await db
    .insertInto('partner_subscription')
    .values(row)
    .onConflict((c) =>
      c.columns(['did', 'stream']).doUpdateSet({ expires: row.expires, partner: row.partner }),
    )
    .execute();
}

export async function deleteSubscription(db: Db, did: string, stream: StreamKind): Promise<void> {
  await db.deleteFrom('partner_subscription').where('did', '=', did).where('stream', '=', stream).execute();
}

export function listLiveSubscriptions(db: Db, now: number): Promise<PartnerSubscriptionTable[]> {
  return db.selectFrom('partner_subscription').selectAll().where('expires', '>', now).execute();
}

/** Whether any session of the partner (on any node) holds an unexpired subscription to the stream. */
export async function hasSubscriber(
  db: Db,
  partner: string,
  stream: StreamKind,
  now: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('partner_subscription')
    .select('did')
    .where('partner', '=', partner)
    .where('stream', '=', stream)
    .where('expires', '>', now)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertStreamEvents(db: Db, rows: readonly PartnerStreamEventTable[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('partner_stream_event').values(rows).execute();
}

/**
 * The oldest waiting events of the partner's streams, locked (PostgreSQL: a second claimer waits
 * for the first one's commit and then skips the rows it deleted; SQLite writes are serial).
 */
export function lockStreamEvents(
  db: Db,
  partner: string,
  streams: readonly StreamKind[],
  names: readonly string[] | undefined,
  limit: number,
): Promise<PartnerStreamEventTable[]> {
  let query = db
    .selectFrom('partner_stream_event')
    .selectAll()
    .where('partner', '=', partner)
    .where('stream', 'in', streams);
  if (names !== undefined) query = query.where('name', 'in', names);
  return query.orderBy('sort_key').limit(limit).forUpdate().execute();
}

export async function deleteStreamEvents(db: Db, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db.deleteFrom('partner_stream_event').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Waiting events older than `before` (ms): nobody polled for them within the retention. */
export async function deleteOldStreamEvents(db: Db, before: number): Promise<void> {
  await db.deleteFrom('partner_stream_event').where('created', '<', before).execute();
}

/** Streams holding more than `max` waiting events. */
export function listCrowdedStreams(db: Db, max: number): Promise<{ partner: string; stream: string }[]> {
  return db
    .selectFrom('partner_stream_event')
    .select(['partner', 'stream'])
    .groupBy(['partner', 'stream'])
    .having((eb) => eb.fn.countAll(), '>', max)
    .execute();
}

/** The sort key of the `keep`-th newest waiting event of a stream. */
export async function keepFrom(
  db: Db,
  partner: string,
  stream: string,
  keep: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('partner_stream_event')
    .select('sort_key')
    .where('partner', '=', partner)
    .where('stream', '=', stream)
    .orderBy('sort_key', 'desc')
    .offset(keep - 1)
    .limit(1)
    .executeTakeFirst();
  return row?.sort_key;
}

export async function deleteStreamEventsBefore(db: Db, partner: string, stream: string, sortKey: string) {
  await db
    .deleteFrom('partner_stream_event')
    .where('partner', '=', partner)
    .where('stream', '=', stream)
    .where('sort_key', '<', sortKey)
    .execute();
}

/** Subscriptions that expired, or whose session is gone. */
export function deleteEndedSubscriptions(db: Db, now: number): Promise<void> {
  return deleteEnded(db, 'partner_subscription', now);
}
