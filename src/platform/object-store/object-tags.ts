/**
 * Tags on objects (decisions.md "Objects and tags"; spec "Tags", "Events" object_share,
 * object_unshare, object_tag): putting tags on objects and taking them off, and re-deriving
 * an object's access after any change of its tags or of a tag's policy.
 */
import type { Db } from '../database/database.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import { ApiError } from '../errors.js';
import type { PageQuery } from '../paging.js';
import {
  type AccessedObject,
  levelsOf,
  policiesOf,
  readersOf,
  type TagPolicy,
  tagsOnObject,
} from './access.js';
import { derive, effectiveLevels, Level, levelNeeded, mayUseTag, type TagOnObject } from './grants.js';
import * as repo from './object-store.repository.js';
import { emitPerViewer, objectPayload, visibleTags } from './views.js';

/** A tag to put on an object and the user who puts it there. */
export interface TagAttachment {
  readonly tag: string;
  readonly attacher: string;
}

/** The one place that writes object_tag rows: `tags` on the object `row` (one query). */
export function attachTags(
  w: UnitOfWork,
  row: repo.ObjectRow,
  tags: readonly TagAttachment[],
): Promise<unknown> {
  return repo.insertObjectTags(w.trx, {
    object: row.uuid,
    tags: tags.map(({ tag }) => tag),
    attachers: tags.map(({ attacher }) => attacher),
    sort_key: row.sort_key,
    time: row.time,
    type: row.type,
  });
}

/** One page of a tag's objects; wrong-tag when the user may not read the tag. */
export async function listByTag(
  db: Db,
  user: string,
  tag: string,
  page: PageQuery,
  type: string | undefined,
  defaultCount: number,
): Promise<(repo.ListedObject & { tag: string[] })[]> {
  const policy = await repo.findPolicy(db, tag, user);
  if (!policy || policy.level < Level.read) throw new ApiError('wrong-tag', 'unknown tag');
  const rows = await repo.listTagObjects(db, tag, user, page, type, defaultCount);
  const tags = await visibleTags(
    db,
    rows.map((row) => row.uuid),
    [user],
  );
  return rows.map((row) => ({ ...row, tag: tags(user, row.uuid) }));
}

function tagOnObject(tag: repo.TagRow, policy: TagPolicy, attacher: string): TagOnObject {
  return {
    tag: tag.uuid,
    attacher,
    tagOwner: tag.owner,
    name: tag.name,
    foreignUse: tag.foreign_use === 1,
    policy,
  };
}

/**
 * POST /api/object/{uuid}/tag: puts tags on the object and takes tags off. Personal tags need
 * read access to the object; tags that share it with others need propagate. Taking the
 * owner's trash tag off restores the object. Answers the tags the user sees afterwards.
 */
export async function tagObject(
  w: UnitOfWork,
  user: string,
  found: AccessedObject,
  add: readonly string[],
  remove: readonly string[],
): Promise<string[]> {
  const { row } = found;
  const wanted = [...new Set([...add, ...remove])];
  const tagRows = new Map((await repo.findTags(w.trx, wanted)).map((tag) => [tag.uuid, tag]));
  const policies = await policiesOf(w.trx, wanted);
  const current = new Set((await repo.listObjectTagUuids(w.trx, row.uuid)).map((entry) => entry.tag));
  for (const uuid of wanted) {
    if ((policies.get(uuid)?.get(user)?.level ?? 0) < Level.read || !tagRows.has(uuid)) {
      throw new ApiError('wrong-tag', `unknown tag ${uuid}`);
    }
  }
  const toAdd: string[] = [];
  const toRemove: string[] = [];
  let restore = false;
  for (const uuid of new Set(add)) {
    const tag = tagRows.get(uuid)!;
    const onObject = tagOnObject(tag, policies.get(uuid)!, user);
    if (tag.name === 'tag_all' || tag.name === 'tag_trash')
      throw new ApiError('access-denied', `${tag.name} is set by the server`);
    if (tag.kind === 'object') throw new ApiError('access-denied', `tag ${uuid} belongs to its object`);
    if (!mayUseTag(onObject, user)) throw new ApiError('access-denied', `tag ${uuid} is not yours to use`);
    if (found.level < levelNeeded(onObject, row.owner))
      throw new ApiError('access-denied', `sharing needs propagate access (tag ${uuid})`);
    if (!current.has(uuid)) toAdd.push(uuid);
  }
  for (const uuid of new Set(remove)) {
    const tag = tagRows.get(uuid)!;
    if (tag.name === 'tag_all') throw new ApiError('access-denied', 'tag_all cannot be removed');
    if (tag.kind === 'object') throw new ApiError('access-denied', `tag ${uuid} belongs to its object`);
    const onObject = tagOnObject(tag, policies.get(uuid)!, user);
    if (user !== row.owner && !mayUseTag(onObject, user))
      throw new ApiError('access-denied', `tag ${uuid} is not yours to remove`);
    if (toAdd.includes(uuid)) throw new ApiError('wrong-syntax', `tag ${uuid} both added and removed`);
    if (current.has(uuid)) {
      toRemove.push(uuid);
      if (tag.name === 'tag_trash') restore = true;
    }
  }
  if (toAdd.length > 0 || toRemove.length > 0) {
    const before = await levelsOf(w.trx, row);
    await attachTags(
      w,
      row,
      toAdd.map((tag) => ({ tag, attacher: user })),
    );
    await repo.deleteObjectTags(w.trx, row.uuid, toRemove);
    let after = row;
    if (restore) {
      after = { ...row, trashed: 0 };
      await repo.updateObject(w.trx, row.uuid, { trashed: 0 });
    }
    await reconcile(w, after, before, user, [...toAdd, ...toRemove], toAdd, toRemove);
  }
  const tags = await visibleTags(w.trx, [row.uuid], [user]);
  return tags(user, row.uuid);
}

/** Puts tags of the object's owner on it without access checks (the platform's own tagging). */
export async function addOwnerTags(
  w: UnitOfWork,
  row: repo.ObjectRow,
  tags: readonly string[],
): Promise<void> {
  if (tags.length === 0) return;
  const before = await levelsOf(w.trx, row);
  await attachTags(
    w,
    row,
    tags.map((tag) => ({ tag, attacher: row.owner })),
  );
  await reconcile(w, row, before, undefined, [...tags], [...tags], []);
}

/**
 * After a change of an object's tags or of a tag's policy: drops the tags that can no longer
 * be derived, keeps tag_shared of every user the object is shared with, and sends
 * object_share, object_unshare and object_tag by comparing access before and after.
 */
export async function reconcile(
  w: UnitOfWork,
  row: repo.ObjectRow,
  before: Map<string, number>,
  user: string | undefined,
  changed: readonly string[],
  added: readonly string[],
  removed: readonly string[],
): Promise<void> {
  const tags = await tagsOnObject(w.trx, row.uuid);
  const derivation = derive(row.owner, tags);
  await repo.deleteObjectTags(w.trx, row.uuid, derivation.dropped);
  // tag_shared of each user the object is shared with lists what others share with them.
  const sharedWith = [...derivation.levels.keys()].filter((other) => other !== row.owner);
  if (sharedWith.length > 0) {
    const present = new Set(tags.map((tag) => tag.tag));
    const shared = await repo.findNamedTags(w.trx, sharedWith, ['tag_shared']);
    await attachTags(
      w,
      row,
      shared.filter((tag) => !present.has(tag.uuid)).map((tag) => ({ tag: tag.uuid, attacher: tag.owner })),
    );
  }
  const after = effectiveLevels(derivation, row.owner, row.trashed === 1);
  const gained = readersOf(after).filter((other) => !before.has(other));
  const lost = readersOf(before).filter((other) => !after.has(other));
  const kept = readersOf(after).filter((other) => before.has(other));
  const actor = user ? { user } : {};
  await emitPerViewer(w, gained, row, 'object_share', actor);
  w.emit(lost, 'object_unshare', { ...objectPayload(row), ...actor });

  const allChanged = [...new Set([...changed, ...derivation.dropped])];
  if (allChanged.length === 0 || kept.length === 0) return;
  const policies = await policiesOf(w.trx, allChanged);
  const canSee = (viewer: string, tag: string) => (policies.get(tag)?.get(viewer)?.level ?? 0) >= Level.read;
  const recipients = kept.filter((viewer) => allChanged.some((tag) => canSee(viewer, tag)));
  if (recipients.length === 0) return;
  const visible = await visibleTags(w.trx, [row.uuid], recipients);
  const removedAll = [...new Set([...removed, ...derivation.dropped])];
  for (const viewer of recipients) {
    w.emit([viewer], 'object_tag', {
      ...objectPayload(row),
      ...actor,
      tag: visible(viewer, row.uuid),
      tag_add: added.filter((tag) => canSee(viewer, tag)),
      tag_delete: removedAll.filter((tag) => canSee(viewer, tag)),
    });
  }
}
