/** Storage of push registrations, the FCM credential and the delivery queue (spec "Push registration"). */
import type { Db } from '../../platform/database/database.js';

export type PushSystem = 'fcm' | 'apns';

export interface PushRegistrationTable {
  system: PushSystem;
  device_token: string;
  user_uuid: string;
  /** apns only */
  application_id: string | null;
  /** apns only: 1 = the sandbox host */
  sandbox: number;
  /** apns only: the topic the client gave (null: the bundle-id part of application_id) */
  apns_topic: string | null;
  created: number;
}

export interface PushFcmCredentialTable {
  name: string;
  project_id: string;
  client_email: string;
  /** The service-account JSON, sealed (src/platform/sealing.ts). */
  credentials: string;
  created: number;
}

export interface PushDeliveryTable {
  id: string;
  user_uuid: string;
  system: PushSystem;
  device_token: string;
  /** The message's fields as JSON, already in the form of the system (strings for fcm). */
  payload: string;
  attempts: number;
  /** ms since epoch */
  due: number;
  /** ms since epoch; 0 = not held by a node */
  lease_until: number;
  /** ms since epoch */
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    push_registration: PushRegistrationTable;
    push_fcm_credential: PushFcmCredentialTable;
    push_delivery: PushDeliveryTable;
  }
}

// ---- registrations

export function listRegistrationsOf(db: Db, users: readonly string[]): Promise<PushRegistrationTable[]> {
  if (users.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('push_registration')
    .selectAll()
    .where('user_uuid', 'in', users)
    .orderBy('created')
    .orderBy('device_token')
    .execute();
}

export function findRegistration(
  db: Db,
  system: PushSystem,
  token: string,
): Promise<PushRegistrationTable | undefined> {
  return db
    .selectFrom('push_registration')
    .selectAll()
    .where('system', '=', system)
    .where('device_token', '=', token)
    .executeTakeFirst();
}

/** Adds or replaces (also moves from another user) the registration of a token. */
export function upsertRegistration(db: Db, row: PushRegistrationTable): Promise<unknown> {
  return db
    .insertInto('push_registration')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['system', 'device_token']).doUpdateSet({
        user_uuid: row.user_uuid,
        application_id: row.application_id,
        sandbox: row.sandbox,
        apns_topic: row.apns_topic,
        created: row.created,
      }),
    )
    .execute();
}

/** Deletes a token's registration only if it belongs to `user`; true when one was deleted. */
export async function deleteRegistration(
  db: Db,
  user: string,
  system: PushSystem,
  token: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('push_registration')
    .where('system', '=', system)
    .where('device_token', '=', token)
    .where('user_uuid', '=', user)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The user's registrations beyond the newest `keep` (oldest first). */
export function listSurplusRegistrations(
  db: Db,
  user: string,
  keep: number,
): Promise<Pick<PushRegistrationTable, 'system' | 'device_token'>[]> {
  return db
    .selectFrom('push_registration')
    .select(['system', 'device_token'])
    .where('user_uuid', '=', user)
    .orderBy('created', 'desc')
    .orderBy('device_token', 'desc')
    .offset(keep)
    .limit(1000)
    .execute();
}

// ---- FCM credential

export function findFcmCredential(db: Db, name: string): Promise<PushFcmCredentialTable | undefined> {
  return db.selectFrom('push_fcm_credential').selectAll().where('name', '=', name).executeTakeFirst();
}

export function listFcmCredentials(db: Db): Promise<Omit<PushFcmCredentialTable, 'credentials'>[]> {
  return db
    .selectFrom('push_fcm_credential')
    .select(['name', 'project_id', 'client_email', 'created'])
    .orderBy('name')
    .execute();
}

export function upsertFcmCredential(db: Db, row: PushFcmCredentialTable): Promise<unknown> {
  return db
    .insertInto('push_fcm_credential')
    .values(row)
    .onConflict((oc) =>
      oc.column('name').doUpdateSet({
        project_id: row.project_id,
        client_email: row.client_email,
        credentials: row.credentials,
        created: row.created,
      }),
    )
    .execute();
}

export async function deleteFcmCredential(db: Db, name: string): Promise<boolean> {
  const result = await db.deleteFrom('push_fcm_credential').where('name', '=', name).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

// ---- deliveries

export function insertDeliveries(db: Db, rows: readonly PushDeliveryTable[]): Promise<unknown> {
  if (rows.length === 0) return Promise.resolve();
  return db.insertInto('push_delivery').values(rows).execute();
}

/**
 * Due rows no node holds, locked so that a second node's claim passes them by (PostgreSQL;
 * SQLite writes are serial and drops the lock clauses). Call inside a transaction.
 */
export function lockDueDeliveries(db: Db, now: number, limit: number): Promise<PushDeliveryTable[]> {
  return db
    .selectFrom('push_delivery')
    .selectAll()
    .where('due', '<=', now)
    .where('lease_until', '<', now)
    .orderBy('due')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

export function leaseDeliveries(db: Db, ids: readonly string[], until: number): Promise<unknown> {
  if (ids.length === 0) return Promise.resolve();
  return db.updateTable('push_delivery').set({ lease_until: until }).where('id', 'in', ids).execute();
}

export function deleteDeliveries(db: Db, ids: readonly string[]): Promise<unknown> {
  if (ids.length === 0) return Promise.resolve();
  return db.deleteFrom('push_delivery').where('id', 'in', ids).execute();
}

/** Puts a delivery back for another attempt at `due`. */
export function rescheduleDelivery(db: Db, id: string, attempts: number, due: number): Promise<unknown> {
  return db
    .updateTable('push_delivery')
    .set({ attempts, due, lease_until: 0 })
    .where('id', '=', id)
    .execute();
}

/** When the next delivery can be claimed (ms): its due time, or the end of a lease on it. */
export async function nextDue(db: Db): Promise<number | undefined> {
  const row = await db
    .selectFrom('push_delivery')
    .select((eb) =>
      eb.fn
        .min<number>(
          eb
            .case()
            .when('lease_until', '>', eb.ref('due'))
            .then(eb.ref('lease_until'))
            .else(eb.ref('due'))
            .end(),
        )
        .as('due'),
    )
    .executeTakeFirst();
  return row?.due == null ? undefined : Number(row.due);
}

/** Deliveries the user's registration of `token` would get (tests, and the drop on delete). */
export function deleteDeliveriesTo(db: Db, system: PushSystem, token: string): Promise<unknown> {
  return db
    .deleteFrom('push_delivery')
    .where('system', '=', system)
    .where('device_token', '=', token)
    .execute();
}

/** The registrations of these tokens of one system. */
export function findRegistrations(
  db: Db,
  system: PushSystem,
  tokens: readonly string[],
): Promise<PushRegistrationTable[]> {
  if (tokens.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('push_registration')
    .selectAll()
    .where('system', '=', system)
    .where('device_token', 'in', tokens)
    .execute();
}
