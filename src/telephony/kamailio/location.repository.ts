/**
 * usrloc's `location` table (Kamailio schema version 9, migration 0009), written by Kamailio,
 * read here. Kamailio runs with TZ=UTC, so `expires` is a UTC timestamp without zone on
 * PostgreSQL; db_sqlite stores TIMESTAMP columns as Julian day numbers.
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/database/database.js';

export interface LocationTable {
  id: number;
  username: string;
  contact: string;
  received: string | null;
  expires: string;
  user_agent: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    location: LocationTable;
  }
}

export interface LocationRow {
  username: string;
  contact: string;
  received: string | null;
  expires: string;
  user_agent: string;
}

// Text in both dialects: PostgreSQL's timestamp would otherwise be read in the node's zone.
const expiresText = sql<string>`cast(expires as text)`.as('expires');

export function findLocations(db: Db, username: string): Promise<LocationRow[]> {
  return db
    .selectFrom('location')
    .select(['username', 'contact', 'received', 'user_agent', expiresText])
    .where('username', '=', username)
    .orderBy('id')
    .execute();
}

/** The rows of several users at once (the write-back comparison: one query a pass, not one a user). */
export function findLocationsOf(db: Db, usernames: readonly string[]): Promise<LocationRow[]> {
  return db
    .selectFrom('location')
    .select(['username', 'contact', 'received', 'user_agent', expiresText])
    .where('username', 'in', usernames)
    .orderBy('id')
    .execute();
}

/** Removes every registration of a user (when Kamailio is not there to do it). */
export function deleteLocations(db: Db, username: string): Promise<unknown> {
  return db.deleteFrom('location').where('username', '=', username).execute();
}

/** Every user's latest expiry, for the expiry watch after a restart. */
export function listLocationExpiries(db: Db): Promise<{ username: string; expires: string }[]> {
  return db
    .selectFrom('location')
    .select(['username', sql<string>`cast(max(expires) as text)`.as('expires')])
    .groupBy('username')
    .execute();
}

/**
 * Seconds since the epoch of a location timestamp as either database gives it back. db_sqlite
 * stores t as the Julian day of t - 0.5 s: rounding (x + 0.5) gives t back exactly, where
 * rounding x fell on either side of the half second (one second off at random).
 */
export function parseKamailioTime(text: string): number {
  if (/^[0-9]+(\.[0-9]+)?$/.test(text)) return Math.round((Number(text) - 2440587.5) * 86400 + 0.5);
  return Math.floor(Date.parse(`${text.replace(' ', 'T').slice(0, 19)}Z`) / 1000);
}
