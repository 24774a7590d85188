/**
 * Storage of SIP accounts (spec "SIP accounts"). Kamailio reads the same rows through the
 * `sip_subscriber` view (migration 0009): `ha1`/`ha1b` must change with every change of
 * password or domain.
 */
import type { Db } from '../../platform/database/database.js';

export interface SipAccountTable {
  uuid: string;
  /** The owning user's uuid. */
  owner: string;
  /** SIPUSER form, e.g. `alice_01`; unique across both domains. */
  username: string;
  domain: string;
  /** Kept in clear because GET /api/sip returns it. */
  password: string;
  ha1: string;
  ha1b: string;
  description: string;
  /** Seconds since the epoch. */
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    sip_account: SipAccountTable;
  }
}

export function insertSipAccount(db: Db, row: SipAccountTable): Promise<unknown> {
  return db.insertInto('sip_account').values(row).execute();
}

export function findSipAccountByUsername(db: Db, username: string): Promise<SipAccountTable | undefined> {
  return db.selectFrom('sip_account').selectAll().where('username', '=', username).executeTakeFirst();
}

export async function deleteSipAccount(db: Db, uuid: string): Promise<boolean> {
  const result = await db.deleteFrom('sip_account').where('uuid', '=', uuid).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The owner (user uuid) of the SIP account named `username`, or undefined. */
export async function findSipAccountOwner(db: Db, username: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('sip_account')
    .select('owner')
    .where('username', '=', username)
    .executeTakeFirst();
  return row?.owner;
}
