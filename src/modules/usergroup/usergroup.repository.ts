/** Storage of usergroups and their members (spec "Partner API"). One query per function. */
import type { Db } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';
import { applyPage, type PageQuery } from '../../platform/paging.js';

export interface UsergroupTable {
  uuid: string;
  partner_uuid: string;
  description: string;
  /** 1..9, 0 = none */
  prefix: number;
  credit: number;
  /** concurrent calls of all members together, 0 = no group limit */
  call_limit: number;
  /** JSON array of allowed destination prefixes, [] = no zone filter */
  zonefilter: string;
  time: number;
  sort_key: string;
}

export interface UsergroupMemberTable {
  user_uuid: string;
  usergroup_uuid: string;
  extension: string | null;
  added: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    usergroup: UsergroupTable;
    usergroup_member: UsergroupMemberTable;
  }
}

export function insertUsergroup(db: Db, row: UsergroupTable): Promise<unknown> {
  return db.insertInto('usergroup').values(row).execute();
}

/** The partner's group; inside a write the row is locked (PostgreSQL) until the commit. */
export function findOwnUsergroup(
  db: Db,
  partnerUuid: string,
  uuid: string,
): Promise<UsergroupTable | undefined> {
  return db
    .selectFrom('usergroup')
    .selectAll()
    .where('uuid', '=', uuid)
    .where('partner_uuid', '=', partnerUuid)
    .$if(db.isTransaction, (query) => query.forUpdate())
    .executeTakeFirst();
}

export function findUsergroup(db: Db, uuid: string): Promise<UsergroupTable | undefined> {
  return db.selectFrom('usergroup').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export async function countUsergroups(db: Db, partnerUuid: string): Promise<number> {
  const row = await db
    .selectFrom('usergroup')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('partner_uuid', '=', partnerUuid)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The partner's other group with this prefix (prefixes are unique per partner). */
export function findUsergroupByPrefix(
  db: Db,
  partnerUuid: string,
  prefix: number,
): Promise<Pick<UsergroupTable, 'uuid'> | undefined> {
  return db
    .selectFrom('usergroup')
    .select('uuid')
    .where('partner_uuid', '=', partnerUuid)
    .where('prefix', '=', prefix)
    .executeTakeFirst();
}

export function pageUsergroups(db: Db, partnerUuid: string, page: PageQuery, defaultCount: number) {
  return applyPage(
    db
      .selectFrom('usergroup')
      .select(['uuid', 'description', 'prefix'])
      .where('partner_uuid', '=', partnerUuid),
    page,
    { time: 'time', key: 'sort_key' },
    defaultCount,
  ).execute();
}

export function updateUsergroup(
  db: Db,
  uuid: string,
  changes: Partial<Pick<UsergroupTable, 'description' | 'prefix' | 'credit' | 'call_limit' | 'zonefilter'>>,
): Promise<unknown> {
  return db.updateTable('usergroup').set(changes).where('uuid', '=', uuid).execute();
}

export function deleteUsergroup(db: Db, uuid: string): Promise<unknown> {
  return db.deleteFrom('usergroup').where('uuid', '=', uuid).execute();
}

// ---- members

export function findMembership(db: Db, userUuid: string): Promise<UsergroupMemberTable | undefined> {
  return db.selectFrom('usergroup_member').selectAll().where('user_uuid', '=', userUuid).executeTakeFirst();
}

/** Compiled once, membership and group in one read: the call engine asks on every call. */
const groupOf = preparedQuery((db, a: { userUuid: string }) =>
  db
    .selectFrom('usergroup_member')
    .innerJoin('usergroup', 'usergroup.uuid', 'usergroup_member.usergroup_uuid')
    .selectAll('usergroup')
    .where('usergroup_member.user_uuid', '=', a.userUuid),
);

/** The group the user is a member of. */
export function findGroupOfUser(db: Db, userUuid: string): Promise<UsergroupTable | undefined> {
  return groupOf.first(db, { userUuid });
}

/** The memberships of these users (in any group). */
export function findMemberships(db: Db, userUuids: string[]): Promise<UsergroupMemberTable[]> {
  if (userUuids.length === 0) return Promise.resolve([]);
  return db.selectFrom('usergroup_member').selectAll().where('user_uuid', 'in', userUuids).execute();
}

const membersOf = preparedQuery((db, a: { usergroupUuid: string }) =>
  db
    .selectFrom('usergroup_member')
    .selectAll()
    .where('usergroup_uuid', '=', a.usergroupUuid)
    .orderBy('added')
    .orderBy('user_uuid'),
);

/** The group's members in the order they were added. */
export function listMembers(db: Db, usergroupUuid: string): Promise<UsergroupMemberTable[]> {
  return membersOf.all(db, { usergroupUuid });
}

export async function hasMembers(db: Db, usergroupUuid: string): Promise<boolean> {
  const row = await db
    .selectFrom('usergroup_member')
    .select('user_uuid')
    .where('usergroup_uuid', '=', usergroupUuid)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export function insertMembers(db: Db, rows: UsergroupMemberTable[]): Promise<unknown> {
  return db.insertInto('usergroup_member').values(rows).execute();
}

export function deleteMembers(db: Db, usergroupUuid: string, userUuids: string[]): Promise<unknown> {
  return db
    .deleteFrom('usergroup_member')
    .where('usergroup_uuid', '=', usergroupUuid)
    .where('user_uuid', 'in', userUuids)
    .execute();
}

export function setExtension(db: Db, userUuid: string, extension: string | null): Promise<unknown> {
  return db.updateTable('usergroup_member').set({ extension }).where('user_uuid', '=', userUuid).execute();
}

/** The member of the group with this extension. */
export function findMemberByExtension(
  db: Db,
  usergroupUuid: string,
  extension: string,
): Promise<Pick<UsergroupMemberTable, 'user_uuid'> | undefined> {
  return db
    .selectFrom('usergroup_member')
    .select('user_uuid')
    .where('usergroup_uuid', '=', usergroupUuid)
    .where('extension', '=', extension)
    .executeTakeFirst();
}
