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

/** An event to log: its name, time (seconds) and payload (JSON). */
export interface LoggedEvent {
  name: string;
  time: number;
  payload: string;
}

/** Rows of one multi-row INSERT (5 parameters a row, far below SQLite's and PostgreSQL's limits). */
const INSERT_ROWS = 500;

/**
 * Appends events to subscriptions' logs in this order, one UPDATE a subscription (its seqs are
 * taken with the row locked: one order across nodes) and one multi-row INSERT for all of them.
 */
export async function append(trx: Db, logs: ReadonlyMap<string, readonly LoggedEvent[]>): Promise<void> {
  const rows: WebhookEventTable[] = [];
  // Rows locked in one order (by UUID) by every node: two batches never wait on each other crosswise.
  for (const [webhook, events] of [...logs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (events.length === 0) continue;
    const row = await trx
      .updateTable('webhook')
      .set((eb) => ({ next_seq: eb('next_seq', '+', events.length) }))
      .where('uuid', '=', webhook)
      .returning('next_seq')
      .executeTakeFirst();
    if (!row) continue;
    const first = Number(row.next_seq) - events.length;
    events.forEach(({ name, time, payload }, i) => {
      rows.push({ webhook, seq: first + i, name, time, payload });
    });
  }
  for (let i = 0; i < rows.length; i += INSERT_ROWS)
    await trx
      .insertInto('webhook_event')
      .values(rows.slice(i, i + INSERT_ROWS))
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

/** The next `limit` events of a subscription's log from `cursor` on, in order. */
export function nextEvents(
  db: Db,
  webhook: string,
  cursor: number,
  limit: number,
): Promise<WebhookEventTable[]> {
  return db
    .selectFrom('webhook_event')
    .selectAll()
    .where('webhook', '=', webhook)
    .where('seq', '>=', cursor)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/**
 * Events up to `seq` delivered: the cursor moves past them, the log forgets them and the lease
 * runs until `leaseUntil`. False if the subscription is gone or disabled meanwhile.
 */
export async function delivered(trx: Db, webhook: string, seq: number, leaseUntil: number): Promise<boolean> {
  const result = await trx
    .updateTable('webhook')
    .set({ cursor: seq + 1, failures: 0, retry_at: 0, lease_until: leaseUntil })
    .where('uuid', '=', webhook)
    .where('state', '=', 'active')
    .executeTakeFirst();
  await trx.deleteFrom('webhook_event').where('webhook', '=', webhook).where('seq', '<=', seq).execute();
  return Number(result.numUpdatedRows) === 1;
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
