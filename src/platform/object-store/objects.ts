/**
 * Objects (spec Conventions 9, "Events" object_new, object_modify, object_delete, trash_purge):
 * creating, changing, trashing and purging the rows every object type lives in.
 */
import type { Clock } from '../clock.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import { ApiError } from '../errors.js';
import { newUuid, nowSeconds, uuidSortKey } from '../ids.js';
import { type AccessedObject, accessOf, type ObjectTypeDefinition, readers, readersOf } from './access.js';
import { Level } from './grants.js';
import * as repo from './object-store.repository.js';
import { attachTags } from './object-tags.js';
import { chargeNewObject, chargeVolume, releaseObject, rowBytes, type VolumeQuota } from './quota.js';
import type { UserTagsCache } from './tags.js';
import { unlinkUsers } from './user-links.js';
import { emitPerViewer, objectPayload, visibleOn } from './views.js';

/** What object writes need from the store: the declared types (for purging) and the quota. */
export interface ObjectContext {
  readonly types: ReadonlyMap<string, ObjectTypeDefinition>;
  readonly volumeQuota: VolumeQuota;
  /** The wall clock of the objects' created and modified stamps. */
  readonly clock: Clock;
  /** A user's system and share tags (kept by the store: they never change). */
  readonly userTags: UserTagsCache;
}

export interface NewObject {
  /** A given version 1 UUID (an object standing for something that has one: a box); else a new one. */
  uuid?: string;
  type: string;
  owner: string;
  description?: string;
  status?: string | null;
  /** A sub-classification the type lists by (the client's type name of an xobject). */
  subtype?: string;
  data?: unknown;
  /** Bytes of content files stored with the object. */
  contentBytes?: number;
  /** Further tags of the owner to put on the object (e.g. tag_inbox). */
  tags?: string[];
  /** False for objects the platform makes on its own (a user's own contact). */
  checkQuota?: boolean;
}

export interface ObjectChanges {
  description?: string;
  status?: string | null;
  data?: unknown;
  contentBytes?: number;
}

/** Creates an object with the owner's tag_all (and given tags); object_new to users with access. */
export async function createObject(
  ctx: ObjectContext,
  w: UnitOfWork,
  input: NewObject,
): Promise<repo.ObjectRow> {
  const uuid = input.uuid ?? newUuid();
  const now = nowSeconds(ctx.clock);
  const description = input.description ?? '';
  const data = JSON.stringify(input.data ?? {});
  const volume = rowBytes(description, data) + (input.contentBytes ?? 0);
  const row: repo.ObjectRow = {
    uuid,
    type: input.type,
    owner: input.owner,
    time: now,
    sort_key: uuidSortKey(uuid),
    modified: now,
    description,
    status: input.status ?? null,
    subtype: input.subtype ?? null,
    data,
    volume,
    attached_volume: 0,
    trashed: 0,
  };
  await repo.insertObject(w.trx, row);
  const tagAll = (await ctx.userTags.inWrite(w, input.owner)).tag_all;
  const extra = input.tags ?? [];
  await attachTags(
    w,
    row,
    [tagAll, ...extra].map((tag) => ({ tag, attacher: input.owner })),
  );
  if (extra.length === 0) {
    // Only the owner's tag_all is on it: tag_all grants nobody (grants.ts derive) and its owner's
    // own policy entry never changes (tags.ts updateTag), so the owner alone reads it and sees
    // tag_all. Known without the read below (6 % of a write, docs/benchmarks.md "fifth round").
    await emitPerViewer(w, [input.owner], row, 'object_new', {}, () => [tagAll]);
  } else {
    // Further tags may share it: who may read it and which tags each sees, from one read.
    const { levels, tags: onIt } = await accessOf(w.trx, row);
    await emitPerViewer(w, readersOf(levels), row, 'object_new', {}, visibleOn(onIt));
  }
  // The owner's counters close the write: on PostgreSQL their rows stay locked until the commit,
  // and every write of the owner waits for that lock; the COMMIT rides behind them (a
  // quota-exceeded there still rolls all of it back).
  w.atClose((last) => chargeNewObject(w, ctx.volumeQuota, row, input.checkQuota === false, last));
  return row;
}

/**
 * Changes an object's description, status, type fields or content size; object_modify to its
 * readers. `user` is the user who asked (absent for changes the platform makes itself).
 */
export async function updateObject(
  ctx: ObjectContext,
  w: UnitOfWork,
  row: repo.ObjectRow,
  changes: ObjectChanges,
  user: string | undefined,
): Promise<repo.ObjectRow> {
  const description = changes.description ?? row.description;
  const data = changes.data === undefined ? row.data : JSON.stringify(changes.data);
  const contentBytes = changes.contentBytes ?? row.volume - rowBytes(row.description, row.data);
  const volume = rowBytes(description, data) + Math.max(0, contentBytes);
  const updated: repo.ObjectRow = {
    ...row,
    description,
    data,
    volume,
    status: changes.status === undefined ? row.status : changes.status,
    modified: nowSeconds(ctx.clock),
  };
  await repo.updateObjectFields(w.trx, row.uuid, {
    description,
    data,
    volume,
    status: updated.status,
    modified: updated.modified,
  });
  w.emit(await readers(w.trx, updated), 'object_modify', {
    ...objectPayload(updated),
    ...(user ? { user } : {}),
  });
  // Last, as in createObject: the owner's counter row stays locked until the commit.
  await chargeVolume(w, ctx.volumeQuota, row.owner, volume - row.volume);
  return updated;
}

async function purge(ctx: ObjectContext, w: UnitOfWork, row: repo.ObjectRow): Promise<void> {
  await ctx.types.get(row.type)?.onPurge?.(w, row);
  await releaseObject(w, row);
  // Tags, comments, links and metadata go with the row (foreign keys cascade).
  await repo.deleteObject(w.trx, row.uuid);
}

/**
 * Conventions 9: moves the object to its owner's trash, or with `purge` removes it with its
 * content. object_delete to the users who could read it. Purging is for the owner only.
 */
export async function deleteObject(
  ctx: ObjectContext,
  w: UnitOfWork,
  user: string,
  found: AccessedObject,
  purgeIt: boolean,
): Promise<void> {
  const { row } = found;
  if (found.level < Level.write) throw new ApiError('access-denied', 'write access needed');
  if (purgeIt && row.owner !== user) throw new ApiError('access-denied', 'only the owner purges');
  const before = await readers(w.trx, row);
  if (purgeIt) {
    await purge(ctx, w, row);
  } else {
    if (row.trashed === 1) return;
    const tags = await ctx.userTags.inWrite(w, row.owner);
    await repo.updateObject(w.trx, row.uuid, { trashed: 1, modified: nowSeconds(ctx.clock) });
    await attachTags(w, row, [{ tag: tags.tag_trash, attacher: row.owner }]);
  }
  w.emit(before, 'object_delete', { ...objectPayload(row), user, ...(purgeIt ? { purge: true } : {}) });
}

/** DELETE /api/trash: purges every object in the user's trash; trash_purge to the user. */
export async function emptyTrash(ctx: ObjectContext, w: UnitOfWork, user: string): Promise<number> {
  const rows = await repo.listTrashedObjects(w.trx, user);
  for (const row of rows) await purge(ctx, w, row);
  w.emit([user], 'trash_purge', {});
  return rows.length;
}

/**
 * Account deletion, inside the deleting transaction: the user's objects are purged with their
 * content (object_delete) and their links end (what was shared with or through them is
 * unshared); events and file removal wait for the commit.
 */
export async function removeUser(ctx: ObjectContext, w: UnitOfWork, user: string): Promise<void> {
  for (const row of await repo.listOwnedObjects(w.trx, user)) {
    const before = await readers(w.trx, row);
    await purge(ctx, w, row);
    w.emit(before, 'object_delete', { ...objectPayload(row), user, purge: true });
  }
  for (const link of await repo.listUserLinks(w.trx, user)) await unlinkUsers(w, user, link.other_uuid);
}
