/**
 * Storage of live presentations (spec "Presentation" control and events): state, members and
 * subscribers. One query per function; each takes `db` or a transaction first.
 */
import type { Db } from '../../platform/database/database.js';

export interface PresentationStateTable {
  presentation: string;
  busy: number;
  moderator: string | null;
  page: number;
  /** JSON {x, y, visible}. */
  pointer: string;
  version: number;
  started: number | null;
}

export interface PresentationMemberTable {
  presentation: string;
  user_uuid: string;
  did: string;
  node: string;
  joined: number;
  seen: number;
}

export interface PresentationSubscriberTable {
  presentation: string;
  did: string;
  user_uuid: string;
  node: string;
  time: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    presentation_state: PresentationStateTable;
    presentation_member: PresentationMemberTable;
    presentation_subscriber: PresentationSubscriberTable;
  }
}

export type StateRow = PresentationStateTable;
export type MemberRow = PresentationMemberTable;

// ---- state ----

export function findState(db: Db, presentation: string): Promise<StateRow | undefined> {
  return db
    .selectFrom('presentation_state')
    .selectAll()
    .where('presentation', '=', presentation)
    .executeTakeFirst();
}

/** Busy flags of several presentations. */
export function listBusy(db: Db, presentations: readonly string[]): Promise<{ presentation: string }[]> {
  if (presentations.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('presentation_state')
    .select('presentation')
    .where('presentation', 'in', presentations)
    .where('busy', '=', 1)
    .execute();
}

/** The row a first start needs; nothing when it exists. */
export function insertIdleState(db: Db, presentation: string): Promise<unknown> {
  return db
    .insertInto('presentation_state')
    .values({ presentation, busy: 0, moderator: null, page: 1, pointer: '{}', version: 0, started: null })
    .onConflict((oc) => oc.column('presentation').doNothing())
    .execute();
}

/** not started -> started, atomically: 1 when this call started it, 0 when it was started. */
export async function startState(
  db: Db,
  presentation: string,
  moderator: string,
  pointer: string,
  started: number,
): Promise<number> {
  const result = await db
    .updateTable('presentation_state')
    .set((eb) => ({ busy: 1, moderator, page: 1, pointer, started, version: eb('version', '+', 1) }))
    .where('presentation', '=', presentation)
    .where('busy', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Counts a change of a started presentation and locks its row for the transaction, so that
 * changes of one presentation run one after the other on every node. 0 when not started.
 */
export async function bumpStartedState(db: Db, presentation: string): Promise<number> {
  const result = await db
    .updateTable('presentation_state')
    .set((eb) => ({ version: eb('version', '+', 1) }))
    .where('presentation', '=', presentation)
    .where('busy', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export function updateState(
  db: Db,
  presentation: string,
  changes: Partial<Omit<StateRow, 'presentation' | 'version'>>,
): Promise<unknown> {
  return db.updateTable('presentation_state').set(changes).where('presentation', '=', presentation).execute();
}

/** Started presentations whose moderator is no member (say, the moderator's account was deleted). */
export async function listPresentationsWithoutModerator(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('presentation_state as s')
    .select('s.presentation')
    .where('s.busy', '=', 1)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('presentation_member as m')
            .select('m.user_uuid')
            .whereRef('m.presentation', '=', 's.presentation')
            .whereRef('m.user_uuid', '=', 's.moderator'),
        ),
      ),
    )
    .execute();
  return rows.map((row) => row.presentation);
}

// ---- members ----

/** Adds the member, or moves an existing member to a new session. */
export function upsertMember(db: Db, row: MemberRow): Promise<unknown> {
  return db
    .insertInto('presentation_member')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['presentation', 'user_uuid']).doUpdateSet({ did: row.did, node: row.node, seen: row.seen }),
    )
    .execute();
}

export function findMember(db: Db, presentation: string, user: string): Promise<MemberRow | undefined> {
  return db
    .selectFrom('presentation_member')
    .selectAll()
    .where('presentation', '=', presentation)
    .where('user_uuid', '=', user)
    .executeTakeFirst();
}

/** Members in the order they joined. */
export async function listMemberUuids(db: Db, presentation: string): Promise<string[]> {
  const rows = await db
    .selectFrom('presentation_member')
    .select('user_uuid')
    .where('presentation', '=', presentation)
    .orderBy('joined')
    .orderBy('user_uuid')
    .execute();
  return rows.map((row) => row.user_uuid);
}

export async function countMembers(db: Db, presentation: string): Promise<number> {
  const row = await db
    .selectFrom('presentation_member')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('presentation', '=', presentation)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The member who joined first: the next moderator. */
export function findFirstMember(db: Db, presentation: string): Promise<MemberRow | undefined> {
  return db
    .selectFrom('presentation_member')
    .selectAll()
    .where('presentation', '=', presentation)
    .orderBy('joined')
    .orderBy('user_uuid')
    .limit(1)
    .executeTakeFirst();
}

export async function deleteMember(db: Db, presentation: string, user: string): Promise<number> {
  const result = await db
    .deleteFrom('presentation_member')
    .where('presentation', '=', presentation)
    .where('user_uuid', '=', user)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export function deleteAllMembers(db: Db, presentation: string): Promise<unknown> {
  return db.deleteFrom('presentation_member').where('presentation', '=', presentation).execute();
}

/** A member joining again: its keepalives go to the new session from now on. 0 when not a member. */
export async function moveMember(
  db: Db,
  presentation: string,
  user: string,
  did: string,
  node: string,
  seen: number,
): Promise<number> {
  const result = await db
    .updateTable('presentation_member')
    .set({ did, node, seen })
    .where('presentation', '=', presentation)
    .where('user_uuid', '=', user)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A keepalive: 0 when the user is not a member. */
export async function touchMember(db: Db, presentation: string, user: string, seen: number): Promise<number> {
  const result = await db
    .updateTable('presentation_member')
    .set({ seen })
    .where('presentation', '=', presentation)
    .where('user_uuid', '=', user)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Presentations with members that have not answered since `cutoff`. */
export async function listPresentationsWithStaleMembers(db: Db, cutoff: number): Promise<string[]> {
  const rows = await db
    .selectFrom('presentation_member')
    .select('presentation')
    .distinct()
    .where('seen', '<', cutoff)
    .execute();
  return rows.map((row) => row.presentation);
}

export async function deleteStaleMembers(db: Db, presentation: string, cutoff: number): Promise<number> {
  const result = await db
    .deleteFrom('presentation_member')
    .where('presentation', '=', presentation)
    .where('seen', '<', cutoff)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Drops members whose session is gone (only while they are still in that session). */
export async function deleteMembersInSessions(
  db: Db,
  presentation: string,
  dids: readonly string[],
): Promise<number> {
  if (dids.length === 0) return 0;
  const result = await db
    .deleteFrom('presentation_member')
    .where('presentation', '=', presentation)
    .where('did', 'in', dids)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Members whose sessions this node holds. */
export function listNodeMembers(db: Db, node: string): Promise<Pick<MemberRow, 'presentation' | 'did'>[]> {
  return db
    .selectFrom('presentation_member')
    .select(['presentation', 'did'])
    .where('node', '=', node)
    .orderBy('presentation')
    .execute();
}

// ---- subscribers ----

export function upsertSubscriber(db: Db, row: PresentationSubscriberTable): Promise<unknown> {
  return db
    .insertInto('presentation_subscriber')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['presentation', 'did'])
        .doUpdateSet({ node: row.node, time: row.time, user_uuid: row.user_uuid }),
    )
    .execute();
}

export function deleteSubscriber(db: Db, presentation: string, did: string): Promise<unknown> {
  return db
    .deleteFrom('presentation_subscriber')
    .where('presentation', '=', presentation)
    .where('did', '=', did)
    .execute();
}

export async function listSubscriberDids(db: Db, presentation: string): Promise<string[]> {
  const rows = await db
    .selectFrom('presentation_subscriber')
    .select('did')
    .where('presentation', '=', presentation)
    .execute();
  return rows.map((row) => row.did);
}

/** The distinct sessions subscribed through this node. */
export async function listNodeSubscriberDids(db: Db, node: string): Promise<string[]> {
  const rows = await db
    .selectFrom('presentation_subscriber')
    .select('did')
    .distinct()
    .where('node', '=', node)
    .execute();
  return rows.map((row) => row.did);
}

/** Ends every subscription of sessions that are gone. */
export function deleteSubscriptionsOf(db: Db, dids: readonly string[]): Promise<unknown> {
  if (dids.length === 0) return Promise.resolve();
  return db.deleteFrom('presentation_subscriber').where('did', 'in', dids).execute();
}
