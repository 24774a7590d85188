/** Storage of the numbers that dial into each conference. One query per function. */

import type { Db } from '../../platform/database/database.js';
import { deleteEndedSubscriptions as deleteEnded } from '../../platform/events/subscriptions.js';

export interface ConferencePhoneTable {
  /** E.164 number; a number dials into one room at most. */
  phone: string;
  conference: string;
  /** The conference's owner: the number's owner too. */
  owner: string;
}

/** A session subscribed to a conference's events (GET /api/conference/{uuid}/event) until `expires` (ms). */
export interface ConferenceSubscriptionTable {
  did: string;
  conference: string;
  expires: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    conference_phone: ConferencePhoneTable;
    conference_subscription: ConferenceSubscriptionTable;
  }
}

export function conferenceOfPhone(db: Db, phone: string) {
  return db
    .selectFrom('conference_phone')
    .select(['conference', 'owner'])
    .where('phone', '=', phone)
    .executeTakeFirst();
}

export function phonesTaken(db: Db, phones: readonly string[]) {
  return db
    .selectFrom('conference_phone')
    .select(['phone', 'conference'])
    .where('phone', 'in', phones)
    .execute();
}

export function deletePhonesOf(db: Db, conference: string): Promise<unknown> {
  return db.deleteFrom('conference_phone').where('conference', '=', conference).execute();
}

export function insertPhones(db: Db, rows: readonly ConferencePhoneTable[]): Promise<unknown> {
  return db
    .insertInto('conference_phone')
    .values([...rows])
    .execute();
}

export async function upsertSubscription(db: Db, row: ConferenceSubscriptionTable): Promise<void> {
  await db
    .insertInto('conference_subscription')
    .values(row)
    .onConflict((c) => c.columns(['did', 'conference']).doUpdateSet({ expires: row.expires }))
    .execute();
}

export async function deleteSubscription(db: Db, did: string, conference: string): Promise<void> {
  await db
    .deleteFrom('conference_subscription')
    .where('did', '=', did)
    .where('conference', '=', conference)
    .execute();
}

/** The session's running subscriptions (ms `now`), to bound them. */
export async function countSubscriptions(db: Db, did: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('conference_subscription')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('did', '=', did)
    .where('expires', '>', now)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Subscriptions that expired, or whose session is gone. */
export function deleteEndedSubscriptions(db: Db, now: number): Promise<void> {
  return deleteEnded(db, 'conference_subscription', now);
}

export function listSubscriptions(db: Db): Promise<ConferenceSubscriptionTable[]> {
  return db.selectFrom('conference_subscription').selectAll().execute();
}
