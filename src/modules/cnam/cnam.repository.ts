/** Storage of caller names (cnam) of users and usergroups. One query per function. */
import type { Db } from '../../platform/database/database.js';

export interface UserCnamTable {
  user_uuid: string;
  cnam: string;
}

export interface UsergroupCnamTable {
  usergroup_uuid: string;
  cnam: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    user_cnam: UserCnamTable;
    usergroup_cnam: UsergroupCnamTable;
  }
}

export async function findUserCnam(db: Db, userUuid: string): Promise<string | undefined> {
  return (
    await db.selectFrom('user_cnam').select('cnam').where('user_uuid', '=', userUuid).executeTakeFirst()
  )?.cnam;
}

export function saveUserCnam(db: Db, row: UserCnamTable): Promise<unknown> {
  return db
    .insertInto('user_cnam')
    .values(row)
    .onConflict((oc) => oc.column('user_uuid').doUpdateSet({ cnam: row.cnam }))
    .execute();
}

export function deleteUserCnam(db: Db, userUuid: string): Promise<unknown> {
  return db.deleteFrom('user_cnam').where('user_uuid', '=', userUuid).execute();
}

export async function findUsergroupCnam(db: Db, usergroupUuid: string): Promise<string | undefined> {
  return (
    await db
      .selectFrom('usergroup_cnam')
      .select('cnam')
      .where('usergroup_uuid', '=', usergroupUuid)
      .executeTakeFirst()
  )?.cnam;
}

export function saveUsergroupCnam(db: Db, row: UsergroupCnamTable): Promise<unknown> {
  return db
    .insertInto('usergroup_cnam')
    .values(row)
    .onConflict((oc) => oc.column('usergroup_uuid').doUpdateSet({ cnam: row.cnam }))
    .execute();
}

export function deleteUsergroupCnam(db: Db, usergroupUuid: string): Promise<unknown> {
  return db.deleteFrom('usergroup_cnam').where('usergroup_uuid', '=', usergroupUuid).execute();
}
