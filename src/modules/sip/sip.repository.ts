/**
 * Storage of SIP accounts (spec "SIP accounts"). Kamailio reads the same rows through the
 * `sip_subscriber` view (migration 0009): `ha1`/`ha1b` must change with every change of
 * password or domain. BLF subscriptions (migration 0010) belong to an account.
 */
import type { Db } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';

export interface SipAccountTable {
  uuid: string;
  /** The owning user's uuid. */
  owner: string;
  /** SIPUSER form, e.g. `alice_01`; unique across both domains. */
  username: string;
  domain: string;
  /**
   * Sealed with the deployment's key (src/platform/sealing.ts) because GET /api/sip returns it;
   * rows from before sealing hold it in clear until the start seals them.
   */
  password: string;
  ha1: string;
  ha1b: string;
  description: string;
  /** Seconds since the epoch. */
  created: number;
}

export interface SipBlfTable {
  /** The SIP account's uuid. */
  account: string;
  /** PHONE whose line state the account watches. */
  number: string;
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    sip_account: SipAccountTable;
    sip_blf: SipBlfTable;
  }
}

export function insertSipAccount(db: Db, row: SipAccountTable): Promise<unknown> {
  return db.insertInto('sip_account').values(row).execute();
}

/** Compiled once: the call engine reads an account on every call (docs/benchmarks.md "Calls"). */
const accountByUsername = preparedQuery((db, a: { username: string }) =>
  db.selectFrom('sip_account').selectAll().where('username', '=', a.username),
);

export function findSipAccountByUsername(db: Db, username: string): Promise<SipAccountTable | undefined> {
  return accountByUsername.first(db, { username });
}

/** An account by name, only when `owner` owns it. */
export function findOwnSipAccount(
  db: Db,
  owner: string,
  username: string,
): Promise<SipAccountTable | undefined> {
  return db
    .selectFrom('sip_account')
    .selectAll()
    .where('username', '=', username)
    .where('owner', '=', owner)
    .executeTakeFirst();
}

/** A user's accounts by name. */
export function listSipAccountsOfOwner(db: Db, owner: string): Promise<SipAccountTable[]> {
  return db.selectFrom('sip_account').selectAll().where('owner', '=', owner).orderBy('username').execute();
}

/** Every account by name, or one user's (operator CLI). */
export function listSipAccounts(db: Db, owner?: string): Promise<SipAccountTable[]> {
  let query = db.selectFrom('sip_account').selectAll();
  if (owner !== undefined) query = query.where('owner', '=', owner);
  return query.orderBy('username').execute();
}

/** Names of the accounts that start with `prefix` (`alice_`): the taken numbers. */
export async function listUsernamesWithPrefix(db: Db, prefix: string): Promise<string[]> {
  const rows = await db
    .selectFrom('sip_account')
    .select('username')
    .where('username', 'like', `${prefix}%`)
    .execute();
  return rows.map((row) => row.username);
}

export function updateSipAccount(
  db: Db,
  uuid: string,
  changes: Pick<SipAccountTable, 'domain' | 'password' | 'ha1' | 'ha1b' | 'description'>,
): Promise<unknown> {
  return db.updateTable('sip_account').set(changes).where('uuid', '=', uuid).execute();
}

/** Accounts whose password is still stored in clear (from before passwords were sealed). */
export function listClearPasswords(db: Db): Promise<Pick<SipAccountTable, 'uuid' | 'password'>[]> {
  return db
    .selectFrom('sip_account')
    .select(['uuid', 'password'])
    .where('password', 'not like', 'sealed:v1:%')
    .execute();
}

/** Replaces a clear password by its sealed form, only if it is still that clear value. */
export function replacePassword(db: Db, uuid: string, clear: string, sealed: string): Promise<unknown> {
  return db
    .updateTable('sip_account')
    .set({ password: sealed })
    .where('uuid', '=', uuid)
    .where('password', '=', clear)
    .execute();
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

/**
 * Holds the owner's user row until the transaction ends (PostgreSQL row lock; SQLite runs one
 * write at a time anyway): creations by one user count and name their accounts one after
 * another, so the quota holds under concurrency.
 */
export function lockOwner(db: Db, owner: string): Promise<unknown> {
  return db
    .updateTable('user')
    .set((eb) => ({ uuid: eb.ref('uuid') }))
    .where('uuid', '=', owner)
    .execute();
}

export async function listBlf(db: Db, account: string): Promise<string[]> {
  const rows = await db
    .selectFrom('sip_blf')
    .select('number')
    .where('account', '=', account)
    .orderBy('number')
    .execute();
  return rows.map((row) => row.number);
}

export function insertBlf(db: Db, rows: SipBlfTable[]): Promise<unknown> {
  return db
    .insertInto('sip_blf')
    .values(rows)
    .onConflict((oc) => oc.columns(['account', 'number']).doNothing())
    .execute();
}

export function deleteBlf(db: Db, account: string, numbers: string[]): Promise<unknown> {
  return db.deleteFrom('sip_blf').where('account', '=', account).where('number', 'in', numbers).execute();
}
