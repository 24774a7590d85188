/**
 * Storage of dialplans (spec "Dialplan v2", "Legacy dialplan and call features"): v2 dialplans
 * (the checked body as JSON), the legacy dialplan of a user, and the call-feature state the call
 * engine carries out. One query per function.
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';

export interface DialplanTable {
  uuid: string;
  owner: string;
  description: string;
  /** JSON of the dialplan body (DialplanV2) */
  body: string;
  time: number;
  sort_key: string;
}

export interface LegacyDialplanTable {
  user_uuid: string;
  /** JSON of the LegacyDialplan */
  body: string;
}

export interface CallThroughTable {
  user_uuid: string;
  phone: string;
  filter: string | null;
  /** seconds since epoch after which the request is dropped */
  expires: number;
}

export interface CallbackRequestTable {
  user_uuid: string;
  from_phone: string;
  to_phone: string;
  via: string;
  clip_number: string | null;
  clir: number;
  created: number;
}

export interface CallReverseTable {
  user_uuid: string;
  phone_from: string;
  phone_to: string;
  filter: string | null;
  started: number;
  /** The waiting caller's running leg (running_call.id): alive while its heartbeat is (migration 0031). */
  leg: string | null;
  /** The holding engine's SIP user agent, host:port, where another node hands the reverse call over. */
  address: string | null;
  /** The capability for joining this process, sealed (src/platform/sealing.ts). */
  token: string | null;
}

/** A cyclic action's round-robin position (migration 0018): the start index of its last call. */
export interface DialplanCyclicTable {
  dialplan: string;
  /** The action within the dialplan (its top profile and index, as the engine names it). */
  action: string;
  position: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    dialplan: DialplanTable;
    dialplan_cyclic: DialplanCyclicTable;
    legacy_dialplan: LegacyDialplanTable;
    callthrough: CallThroughTable;
    callback_request: CallbackRequestTable;
    callreverse: CallReverseTable;
  }
}

// ---- dialplan v2

export function insertDialplan(db: Db, row: DialplanTable): Promise<unknown> {
  return db.insertInto('dialplan').values(row).execute();
}

// Compiled once: the call engine reads the dialplan and the legacy dialplan on every call.
const ownDialplan = preparedQuery((db, a: { owner: string; uuid: string }) =>
  db.selectFrom('dialplan').selectAll().where('uuid', '=', a.uuid).where('owner', '=', a.owner),
);

export function findOwnDialplan(db: Db, owner: string, uuid: string): Promise<DialplanTable | undefined> {
  return ownDialplan.first(db, { owner, uuid });
}

export async function countDialplans(db: Db, owner: string): Promise<number> {
  const row = await db
    .selectFrom('dialplan')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner', '=', owner)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function listDialplans(db: Db, owner: string): Promise<Pick<DialplanTable, 'uuid' | 'description'>[]> {
  return db
    .selectFrom('dialplan')
    .select(['uuid', 'description'])
    .where('owner', '=', owner)
    .orderBy('sort_key')
    .execute();
}

export function updateDialplan(
  db: Db,
  uuid: string,
  changes: Pick<DialplanTable, 'description' | 'body'>,
): Promise<unknown> {
  return db.updateTable('dialplan').set(changes).where('uuid', '=', uuid).execute();
}

export function deleteDialplan(db: Db, uuid: string): Promise<unknown> {
  return db.deleteFrom('dialplan').where('uuid', '=', uuid).execute();
}

/**
 * Advances a cyclic action's round-robin in one atomic statement (both dialects): the first call
 * starts at 0, each next one at the previous start + 1 modulo `count`. Resolves with the start.
 */
export async function advanceCyclic(
  db: Db,
  dialplan: string,
  action: string,
  count: number,
): Promise<number> {
  const row = await db
    .insertInto('dialplan_cyclic')
    .values({ dialplan, action, position: 0 })
    .onConflict((oc) =>
      oc
        .columns(['dialplan', 'action'])
        .doUpdateSet({ position: sql<number>`(${sql.ref('dialplan_cyclic.position')} + 1) % ${count}` }),
    )
    .returning('position')
    .executeTakeFirstOrThrow();
  return Number(row.position);
}

// ---- legacy dialplan

const legacyBody = preparedQuery((db, a: { user: string }) =>
  db.selectFrom('legacy_dialplan').select('body').where('user_uuid', '=', a.user),
);

export async function findLegacyDialplan(db: Db, user: string): Promise<string | undefined> {
  return (await legacyBody.first(db, { user }))?.body;
}

export function saveLegacyDialplan(db: Db, row: LegacyDialplanTable): Promise<unknown> {
  return db
    .insertInto('legacy_dialplan')
    .values(row)
    .onConflict((oc) => oc.column('user_uuid').doUpdateSet({ body: row.body }))
    .execute();
}

// ---- call features

export function findCallThrough(db: Db, user: string): Promise<CallThroughTable | undefined> {
  return db.selectFrom('callthrough').selectAll().where('user_uuid', '=', user).executeTakeFirst();
}

export function saveCallThrough(db: Db, row: CallThroughTable): Promise<unknown> {
  const { user_uuid: _, ...changes } = row;
  return db
    .insertInto('callthrough')
    .values(row)
    .onConflict((oc) => oc.column('user_uuid').doUpdateSet(changes))
    .execute();
}

export function deleteCallThrough(db: Db, user: string): Promise<unknown> {
  return db.deleteFrom('callthrough').where('user_uuid', '=', user).execute();
}

export function findCallbackRequest(db: Db, user: string): Promise<CallbackRequestTable | undefined> {
  return db.selectFrom('callback_request').selectAll().where('user_uuid', '=', user).executeTakeFirst();
}

export function saveCallbackRequest(db: Db, row: CallbackRequestTable): Promise<unknown> {
  const { user_uuid: _, ...changes } = row;
  return db
    .insertInto('callback_request')
    .values(row)
    .onConflict((oc) => oc.column('user_uuid').doUpdateSet(changes))
    .execute();
}

export function deleteCallbackRequest(db: Db, user: string): Promise<unknown> {
  return db.deleteFrom('callback_request').where('user_uuid', '=', user).execute();
}

export function findCallReverse(db: Db, user: string): Promise<CallReverseTable | undefined> {
  return db.selectFrom('callreverse').selectAll().where('user_uuid', '=', user).executeTakeFirst();
}

export function saveCallReverse(db: Db, row: CallReverseTable): Promise<unknown> {
  const { user_uuid: _, ...changes } = row;
  return db
    .insertInto('callreverse')
    .values(row)
    .onConflict((oc) => oc.column('user_uuid').doUpdateSet(changes))
    .execute();
}

export function setCallReverseFilter(db: Db, user: string, filter: string): Promise<unknown> {
  return db.updateTable('callreverse').set({ filter }).where('user_uuid', '=', user).execute();
}

/** The user's process; with `leg`, only while it is still that caller's (a newer one may have taken over). */
export function deleteCallReverse(db: Db, user: string, leg?: string | null): Promise<unknown> {
  let query = db.deleteFrom('callreverse').where('user_uuid', '=', user);
  if (leg) query = query.where('leg', '=', leg);
  return query.execute();
}
