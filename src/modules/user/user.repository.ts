/** Storage of user accounts (spec "User"). One query per function. */
import type { Db } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';

export interface UserTable {
  uuid: string;
  username: string;
  username_key: string;
  email: string | null;
  email_key: string | null;
  password_hash: string;
  firstname: string;
  lastname: string;
  display_name: string;
  language: string;
  country_code: string;
  newsletter: number;
  partner_uuid: string | null;
  disabled: number;
  /** set by the user's partner (spec "Partner API") */
  ignore_ip_whitelisting: number;
  created: number;
  birthday: string | null;
  zip_code: string | null;
  town: string | null;
  street: string | null;
  house_number: string | null;
  country: string | null;
  area_code: string | null;
  fax_ident: string | null;
  fax_header: string | null;
  pin_hash: string | null;
  /** incomplete, checking, missmatch, baddocument, fail, ok */
  validation: string;
  picture: number;
}

/** A password recovery or e-mail change code (only its hash), single use. */
export interface AccountCodeTable {
  code_hash: string;
  purpose: string;
  user_uuid: string;
  /** The new address of an e-mail change. */
  email: string | null;
  created: number;
  expires: number;
}

export interface IdcardJobTable {
  uuid: string;
  user_uuid: string;
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    user: UserTable;
    internal_permission: { user_uuid: string; permission: string };
    account_code: AccountCodeTable;
    idcard_job: IdcardJobTable;
  }
}

export type UserRow = UserTable;

export function insertUser(db: Db, row: UserRow): Promise<unknown> {
  return db.insertInto('user').values(row).execute();
}

/** Compiled once: sessions and the calls' CDRs read users all the time. */
const userByUuid = preparedQuery((db, a: { uuid: string }) =>
  db.selectFrom('user').selectAll().where('uuid', '=', a.uuid),
);

export function findUserByUuid(db: Db, uuid: string): Promise<UserRow | undefined> {
  return userByUuid.first(db, { uuid });
}

export function findUserByUsernameKey(db: Db, usernameKey: string): Promise<UserRow | undefined> {
  return db.selectFrom('user').selectAll().where('username_key', '=', usernameKey).executeTakeFirst();
}

export function findUserByEmailKey(db: Db, emailKey: string): Promise<UserRow | undefined> {
  return db.selectFrom('user').selectAll().where('email_key', '=', emailKey).executeTakeFirst();
}

export function listUsers(db: Db, limit: number): Promise<UserRow[]> {
  return db.selectFrom('user').selectAll().orderBy('created').orderBy('uuid').limit(limit).execute();
}

/**
 * UUIDs of a partner's users by creation (created, then UUID), a page after `after` (its
 * created and UUID) within [from, to].
 */
export function listPartnerUsers(
  db: Db,
  partnerUuid: string,
  page: {
    from?: number | undefined;
    to?: number | undefined;
    after?: { created: number; uuid: string } | undefined;
    order: 'asc' | 'desc';
    count: number;
  },
): Promise<{ uuid: string }[]> {
  let query = db.selectFrom('user').select('uuid').where('partner_uuid', '=', partnerUuid);
  if (page.from !== undefined) query = query.where('created', '>=', page.from);
  if (page.to !== undefined) query = query.where('created', '<=', page.to);
  const { after } = page;
  if (after) {
    const beyond = page.order === 'asc' ? '>' : '<';
    query = query.where((eb) =>
      eb.or([
        eb('created', beyond, after.created),
        eb.and([eb('created', '=', after.created), eb('uuid', beyond, after.uuid)]),
      ]),
    );
  }
  return query.orderBy('created', page.order).orderBy('uuid', page.order).limit(page.count).execute();
}

export function updateUser(db: Db, uuid: string, changes: Partial<UserRow>): Promise<unknown> {
  return db.updateTable('user').set(changes).where('uuid', '=', uuid).executeTakeFirst();
}

export async function deleteUser(db: Db, uuid: string): Promise<boolean> {
  const result = await db.deleteFrom('user').where('uuid', '=', uuid).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function hasPermission(db: Db, userUuid: string, permission: string): Promise<boolean> {
  const row = await db
    .selectFrom('internal_permission')
    .select('permission')
    .where('user_uuid', '=', userUuid)
    .where('permission', '=', permission)
    .executeTakeFirst();
  return row !== undefined;
}

export function insertPermission(db: Db, userUuid: string, permission: string): Promise<unknown> {
  return db
    .insertInto('internal_permission')
    .values({ user_uuid: userUuid, permission })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function deletePermission(db: Db, userUuid: string, permission: string): Promise<boolean> {
  const result = await db
    .deleteFrom('internal_permission')
    .where('user_uuid', '=', userUuid)
    .where('permission', '=', permission)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export function listPermissions(
  db: Db,
  userUuid?: string,
): Promise<{ user_uuid: string; permission: string }[]> {
  let query = db.selectFrom('internal_permission').selectAll();
  if (userUuid) query = query.where('user_uuid', '=', userUuid);
  return query.orderBy('user_uuid').orderBy('permission').execute();
}

// --- single-use codes (password recovery, e-mail change) ---

export function insertCode(db: Db, row: AccountCodeTable): Promise<unknown> {
  return db.insertInto('account_code').values(row).execute();
}

export function findCode(db: Db, codeHash: string): Promise<AccountCodeTable | undefined> {
  return db.selectFrom('account_code').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

/** Deletes one code; false when it was gone already (used by a concurrent call). */
export async function deleteCode(db: Db, codeHash: string): Promise<boolean> {
  const result = await db.deleteFrom('account_code').where('code_hash', '=', codeHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export function deleteCodesOfUser(db: Db, userUuid: string, purpose: string): Promise<unknown> {
  return db
    .deleteFrom('account_code')
    .where('user_uuid', '=', userUuid)
    .where('purpose', '=', purpose)
    .execute();
}

export function deleteExpiredCodes(db: Db, now: number): Promise<unknown> {
  return db.deleteFrom('account_code').where('expires', '<=', now).execute();
}

// --- id card jobs (address validation) ---

export function insertIdcardJob(db: Db, row: IdcardJobTable): Promise<unknown> {
  return db.insertInto('idcard_job').values(row).execute();
}

export function findIdcardJob(db: Db, uuid: string): Promise<IdcardJobTable | undefined> {
  return db.selectFrom('idcard_job').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export function listIdcardJobs(db: Db): Promise<IdcardJobTable[]> {
  return db.selectFrom('idcard_job').selectAll().orderBy('created').orderBy('uuid').execute();
}

export function listIdcardJobsOfUser(db: Db, userUuid: string): Promise<IdcardJobTable[]> {
  return db.selectFrom('idcard_job').selectAll().where('user_uuid', '=', userUuid).execute();
}

export async function deleteIdcardJob(db: Db, uuid: string): Promise<boolean> {
  const result = await db.deleteFrom('idcard_job').where('uuid', '=', uuid).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export function deleteIdcardJobsOfUser(db: Db, userUuid: string): Promise<unknown> {
  return db.deleteFrom('idcard_job').where('user_uuid', '=', userUuid).execute();
}

/** Users created in [from, to) (seconds), and all users created before `to`. */
export async function countUsers(
  db: Db,
  from: number,
  to: number,
): Promise<{ created: number; total: number }> {
  const row = await db
    .selectFrom('user')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.sum<number>(eb.case().when('created', '>=', from).then(1).else(0).end()).as('created'),
    ])
    .where('created', '<', to)
    .executeTakeFirstOrThrow();
  return { created: Number(row.created ?? 0), total: Number(row.total) };
}
