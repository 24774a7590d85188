/**
 * Storage volume accounting (spec "Feature packs" volume): what objects take against the quota.
 * Per-user counters (usage.repository.ts) change in the transaction of every write that changes
 * what a user stores, so a quota check reads one row instead of summing the user's objects.
 */
import type { Db } from '../database/database.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import { ApiError } from '../errors.js';
import * as repo from './object-store.repository.js';
import * as usage from './usage.repository.js';

/** The storage volume a user may use, in bytes, as SQL (usage.repository.ts VolumeQuotaSql). */
export type VolumeQuota = usage.VolumeQuotaSql;

/** Bytes the row takes beside its content files. */
export function rowBytes(description: string, data: string): number {
  return Buffer.byteLength(description, 'utf8') + Buffer.byteLength(data, 'utf8');
}

/**
 * Adds `delta` bytes to the owner's volume counter. Growth, unless `unchecked`, must fit the
 * quota: one conditional statement that reads the quota itself, so two concurrent writes cannot
 * both take the last free bytes (quota-exceeded, and the caller's unit of work changes nothing).
 */
export async function chargeVolume(
  w: UnitOfWork,
  quota: VolumeQuota,
  owner: string,
  delta: number,
  unchecked = false,
): Promise<void> {
  if (delta === 0) return;
  if (!(await usage.addVolume(w.trx, owner, delta, quota, delta > 0 && !unchecked))) throw exceeded();
}

/**
 * A new object: its bytes on the owner's volume (within the quota unless `unchecked`, as
 * chargeVolume) and one more of its type, together; `commitBehind` as ClosingWork's `last`.
 */
export async function chargeNewObject(
  w: UnitOfWork,
  quota: VolumeQuota,
  object: { owner: string; type: string; volume: number },
  unchecked: boolean,
  commitBehind = false,
): Promise<void> {
  const { owner, type, volume } = object;
  if (!(await usage.addNewObject(w.trx, owner, type, volume, quota, !unchecked, commitBehind)))
    throw exceeded();
}

function exceeded(): ApiError {
  return new ApiError('quota-exceeded', 'storage volume quota exceeded');
}

/**
 * Changes the bytes stored with an object (metadata, comments, chat messages) by `delta`;
 * growth counts against the object owner's quota (quota-exceeded, before anything changes).
 */
export async function attachVolume(
  w: UnitOfWork,
  quota: VolumeQuota,
  object: { uuid: string; owner: string },
  delta: number,
): Promise<void> {
  if (delta === 0) return;
  await chargeVolume(w, quota, object.owner, delta);
  await repo.addAttachedVolume(w.trx, object.uuid, delta);
}

/**
 * quota-exceeded when the owner's objects would take more than the quota with `extraBytes`
 * more. Only a test: what is not yet stored (a conversion's output) is charged when it is.
 */
export async function checkQuota(
  db: Db,
  quota: VolumeQuota,
  owner: string,
  extraBytes: number,
): Promise<void> {
  if (extraBytes <= 0) return;
  const { used, allowed } = await usage.readVolumeAndQuota(db, owner, quota);
  if (used + extraBytes > allowed) throw exceeded();
}

/** Before an object is purged: its bytes and its count leave the owner's counters. */
export async function releaseObject(w: UnitOfWork, row: { uuid: string; owner: string; type: string }) {
  await usage.releaseObjectVolume(w.trx, row.owner, row.uuid);
  await usage.addObjectCount(w.trx, row.owner, row.type, -1);
}

/** Bytes of storage volume a user's objects take, as counted. */
export function usedVolume(db: Db, user: string): Promise<number> {
  return usage.readVolume(db, user);
}

/** The user's objects per type, trashed ones included, as counted. */
export function objectCounts(db: Db, user: string): Promise<Record<string, number>> {
  return usage.readObjectCounts(db, user);
}

/** A counter that differed from the sum over the object rows. */
export interface UsageDifference {
  user: string;
  /** `volume`, or `objects.<type>`. */
  counter: string;
  counted: number;
  summed: number;
}

/**
 * The operator's check: every counter recomputed from the object rows, in one unit of work;
 * the counters that differed are listed and, with `fix`, set to the sums.
 */
export async function recountUsage(w: UnitOfWork, fix: boolean): Promise<UsageDifference[]> {
  const differences: UsageDifference[] = [];
  for (const row of await usage.compareVolumes(w.trx)) {
    const counted = Number(row.counted ?? 0);
    const summed = Number(row.summed ?? 0);
    if (counted !== summed || row.counted === null)
      differences.push({ user: row.user_uuid, counter: 'volume', counted, summed });
  }
  const counts = new Map<string, { user: string; type: string; counted: number; summed: number }>();
  const entry = (user: string, type: string) => {
    const key = `${user} ${type}`;
    const found = counts.get(key) ?? { user, type, counted: 0, summed: 0 };
    counts.set(key, found);
    return found;
  };
  for (const row of await usage.listObjectCounts(w.trx))
    entry(row.user_uuid, row.type).counted = Number(row.count);
  for (const row of await usage.sumObjectCounts(w.trx)) entry(row.owner, row.type).summed = Number(row.count);
  for (const c of counts.values())
    if (c.counted !== c.summed)
      differences.push({ user: c.user, counter: `objects.${c.type}`, counted: c.counted, summed: c.summed });
  if (fix) {
    for (const d of differences) {
      if (d.counter === 'volume') await usage.setVolume(w.trx, d.user, d.summed);
      else await usage.setObjectCount(w.trx, d.user, d.counter.slice('objects.'.length), d.summed);
    }
  }
  return differences;
}
