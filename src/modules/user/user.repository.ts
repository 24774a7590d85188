/** Storage of user accounts (spec "User"). One query per function. */
import type { Db } from '../../platform/database/database.js';

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
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    user: UserTable;
    internal_permission: { user_uuid: string; permission: string };
  }
}

export type UserRow = UserTable;

export function insertUser(db: Db, row: UserRow): Promise<unknown> {
  return db.insertInto('user').values(row).execute();
}

export function findUserByUuid(db: Db, uuid: string): Promise<UserRow | undefined> {
  return db.selectFrom('user').selectAll().where('uuid', '=', uuid).executeTakeFirst();
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
