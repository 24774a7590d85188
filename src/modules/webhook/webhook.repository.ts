/** Storage of webhook subscriptions and their delivery logs (decisions.md "Event transports"). */
import type { Db } from '../../platform/database/database.js';

export interface WebhookTable {
  uuid: string;
  /** The user or partner UUID whose events it receives. */
  owner: string;
  url: string;
  /** The signing secret, sealed (SecretBox). */
  secret: string;
  /** JSON array of event names; null: every event. */
  events: string | null;
  state: 'active' | 'disabled';
  /** The seq the next logged event gets. */
  next_seq: number;
  /** The seq of the next event to deliver. */
  cursor: number;
  failures: number;
  /** Ms since the epoch before which no delivery is tried (backoff). */
  retry_at: number;
  /** Ms since the epoch until which one node delivers it. */
  lease_until: number;
  created: number;
}

export interface WebhookEventTable {
  webhook: string;
  seq: number;
  name: string;
  time: number;
  payload: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    webhook: WebhookTable;
    webhook_event: WebhookEventTable;
  }
}

export function listOf(db: Db, owner: string): Promise<WebhookTable[]> {
  return db.selectFrom('webhook').selectAll().where('owner', '=', owner).orderBy('created').execute();
}

export async function countOf(db: Db, owner: string): Promise<number> {
  const row = await db
    .selectFrom('webhook')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner', '=', owner)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export function find(db: Db, uuid: string): Promise<WebhookTable | undefined> {
  return db.selectFrom('webhook').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export async function insert(trx: Db, row: WebhookTable): Promise<void> {
  await trx.insertInto('webhook').values(row).execute();
}

export async function remove(trx: Db, uuid: string, owner: string): Promise<boolean> {
  const result = await trx
    .deleteFrom('webhook')
    .where('uuid', '=', uuid)
    .where('owner', '=', owner)
    .executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) return false;
  await trx.deleteFrom('webhook_event').where('webhook', '=', uuid).execute();
  return true;
}

/** Active subscriptions of these owners. */
export function activeOf(db: Db, owners: readonly string[]): Promise<WebhookTable[]> {
  return db
    .selectFrom('webhook')
    .selectAll()
    .where('owner', 'in', owners)
    .where('state', '=', 'active')
    .orderBy('created')
    .execute();
}

export async function owners(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('webhook').select('owner').distinct().execute();
  return rows.map((row) => row.owner);
}

/** Appends an event to a subscription's log; its seq is taken with the row locked (one order across nodes). */
export async function append(
  trx: Db,
  webhook: string,
  name: string,
  time: number,
  payload: string,
): Promise<void> {
  const row = await trx
    .updateTable('webhook')
    .set((eb) => ({ next_seq: eb('next_seq', '+', 1) }))
    .where('uuid', '=', webhook)
    .returning('next_seq')
    .executeTakeFirst();
  if (!row) return;
  await trx
    .insertInto('webhook_event')
    .values({ webhook, seq: Number(row.next_seq) - 1, name, time, payload })
    .execute();
}

/** Takes the delivery of a subscription for `ms` unless another node holds it. */
export async function lease(trx: Db, uuid: string, now: number, ms: number): Promise<boolean> {
  const result = await trx
    .updateTable('webhook')
    .set({ lease_until: now + ms })
    .where('uuid', '=', uuid)
    .where('state', '=', 'active')
    .where('lease_until', '<=', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export function nextEvent(db: Db, webhook: string, cursor: number): Promise<WebhookEventTable | undefined> {
  return db
    .selectFrom('webhook_event')
    .selectAll()
    .where('webhook', '=', webhook)
    .where('seq', '>=', cursor)
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
}

/** A delivered event: the cursor moves past it and the log forgets it. */
export async function delivered(trx: Db, webhook: string, seq: number): Promise<void> {
  await trx
    .updateTable('webhook')
    .set({ cursor: seq + 1, failures: 0, retry_at: 0 })
    .where('uuid', '=', webhook)
    .execute();
  await trx.deleteFrom('webhook_event').where('webhook', '=', webhook).where('seq', '<=', seq).execute();
}

export async function failed(
  trx: Db,
  webhook: string,
  failures: number,
  retryAt: number,
  disable: boolean,
): Promise<void> {
  await trx
    .updateTable('webhook')
    .set({ failures, retry_at: retryAt, lease_until: 0, ...(disable ? { state: 'disabled' as const } : {}) })
    .where('uuid', '=', webhook)
    .execute();
}

export async function release(trx: Db, webhook: string): Promise<void> {
  await trx.updateTable('webhook').set({ lease_until: 0 }).where('uuid', '=', webhook).execute();
}

/** Active subscriptions with events waiting (to deliver after a restart). */
export function pending(db: Db): Promise<{ uuid: string }[]> {
  return db
    .selectFrom('webhook')
    .select('uuid')
    .where('state', '=', 'active')
    .whereRef('cursor', '<', 'next_seq')
    .execute();
}
