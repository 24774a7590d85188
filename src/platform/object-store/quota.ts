/** Storage volume accounting (spec "Feature packs" volume): what objects take against the quota. */
import type { Db } from '../database/database.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import { ApiError } from '../errors.js';
import * as repo from './object-store.repository.js';

/** The storage volume a user may use, in bytes (from the feature packs). */
export type VolumeQuota = (db: Db, user: string) => Promise<number>;

/** Bytes the row takes beside its content files. */
export function rowBytes(description: string, data: string): number {
  return Buffer.byteLength(description, 'utf8') + Buffer.byteLength(data, 'utf8');
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
  await checkQuota(w.trx, quota, object.owner, delta);
  await repo.addAttachedVolume(w.trx, object.uuid, delta);
}

/** quota-exceeded when the owner's objects would take more than the quota. */
export async function checkQuota(
  db: Db,
  quota: VolumeQuota,
  owner: string,
  extraBytes: number,
): Promise<void> {
  if (extraBytes <= 0) return;
  const used = await repo.sumVolume(db, owner);
  const allowed = await quota(db, owner);
  if (used + extraBytes > allowed) throw new ApiError('quota-exceeded', 'storage volume quota exceeded');
}
