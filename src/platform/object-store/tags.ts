/**
 * Tags and their policies (decisions.md "Objects and tags"; spec "Tags", "Events" tag_*): every
 * user's system and share tags, custom tags and the tags object types hold for one object.
 * A change of a tag's policy re-derives the access to every object carrying it.
 */
import type { Clock } from '../clock.js';
import type { Db } from '../database/database.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import { ApiError } from '../errors.js';
import { newUuid, nowSeconds, uuidSortKey } from '../ids.js';
import { levelsOf, policiesOf } from './access.js';
import { grantOf, Level, SHARE_TAGS, type ShareTagName, SYSTEM_TAGS } from './grants.js';
import * as repo from './object-store.repository.js';
import { reconcile } from './object-tags.js';

/** A tag as clients see it. */
export interface TagView {
  owner: string;
  label: string;
  kind: repo.TagKind;
  foreign_use: boolean;
  policy: Record<string, number>;
}

export interface TagChanges {
  label?: string;
  /** user -> new level (0 removes the user). */
  policy?: Record<string, number>;
  foreignUse?: boolean;
}

/** The user's system and share tags, as in the user object. */
export type UserTags = Record<(typeof SYSTEM_TAGS)[number] | ShareTagName, string>;

const ALL_TAG_NAMES = [...SYSTEM_TAGS, ...(Object.keys(SHARE_TAGS) as ShareTagName[])];

/** A tag to create (createTag). */
export interface NewTag {
  label: string;
  policy: Record<string, number>;
  foreignUse: boolean;
  kind?: 'custom' | 'object';
}

/** The system and share tags every user gets at creation (run in the creating transaction). */
export async function createUserTags(clock: Clock, w: UnitOfWork, user: string): Promise<void> {
  const now = nowSeconds(clock);
  const rows: repo.TagRow[] = ALL_TAG_NAMES.map((name) => {
    const uuid = newUuid();
    return {
      uuid,
      owner: user,
      kind: name.startsWith('share_') ? 'share' : 'system',
      name,
      label: name,
      foreign_use: 0,
      time: now,
      sort_key: uuidSortKey(uuid),
    };
  });
  await repo.insertTags(w.trx, rows);
  await repo.insertPolicies(
    w.trx,
    rows.map((row) => ({ tag: row.uuid, user_uuid: user, level: Level.owner, grant_level: 0 })),
  );
}

/** The uuids of a user's system and share tags. */
export async function userTags(db: Db, user: string): Promise<UserTags> {
  const rows = await repo.findNamedTags(db, [user], ALL_TAG_NAMES);
  const tags = Object.fromEntries(rows.map((row) => [row.name, row.uuid])) as Partial<UserTags>;
  for (const name of ALL_TAG_NAMES) {
    if (!tags[name]) throw new Error(`user ${user} has no ${name} tag`);
  }
  return tags as UserTags;
}

/** Users whose system and share tags a store keeps in memory (the oldest entry leaves first). */
const USER_TAGS_KEPT = 10_000;

/**
 * A user's system and share tags, read once per node: every object created looks up its
 * owner's tag_all, a statement (a round trip on PostgreSQL) per write otherwise
 * (docs/benchmarks.md "The object path, profiled"). Kept without expiry because these tags
 * never change: made with the account, gone only with it, and a user's UUID is never used again,
 * so no node can hold a stale entry. What a write reads is kept only once it has committed: a
 * user created in a write that rolls back (or is tried again) never existed.
 */
export class UserTagsCache {
  readonly #byUser = new Map<string, UserTags>();

  /** Outside a write, or inside one that cannot have created the user's tags. */
  async get(db: Db, user: string): Promise<UserTags> {
    const kept = this.#byUser.get(user);
    if (kept) return kept;
    const tags = await userTags(db, user);
    if (!db.isTransaction) this.#keep(user, tags);
    return tags;
  }

  /** Inside a write: kept after its commit. */
  async inWrite(w: UnitOfWork, user: string): Promise<UserTags> {
    const kept = this.#byUser.get(user);
    if (kept) return kept;
    const tags = await userTags(w.trx, user);
    w.afterCommit(() => this.#keep(user, tags));
    return tags;
  }

  #keep(user: string, tags: UserTags): void {
    if (this.#byUser.size >= USER_TAGS_KEPT) this.#byUser.delete(this.#byUser.keys().next().value!);
    this.#byUser.set(user, tags);
  }
}

function toTagView(row: repo.TagRow, policy: Map<string, { level: number }> | undefined): TagView {
  return {
    owner: row.owner,
    label: row.label,
    kind: row.kind,
    foreign_use: row.foreign_use === 1,
    policy: Object.fromEntries([...(policy ?? [])].map(([user, entry]) => [user, entry.level])),
  };
}

async function tagView(db: Db, row: repo.TagRow): Promise<TagView> {
  const policies = await policiesOf(db, [row.uuid]);
  return toTagView(row, policies.get(row.uuid));
}

function tagPayload(uuid: string, view: TagView, policy: Record<string, number> = view.policy) {
  return { tag: uuid, owner: view.owner, label: view.label, foreign_use: view.foreign_use, policy };
}

/**
 * The part of a policy `viewer` may see: the owner sees all of it; anyone
 * else the owner's entry and its own, never the other users the owner shares with (a share tag
 * would otherwise list every user the owner is linked with).
 */
export function policySeenBy(
  owner: string,
  policy: Record<string, number>,
  viewer: string,
): Record<string, number> {
  if (viewer === owner) return policy;
  const seen: Record<string, number> = {};
  for (const user of [owner, viewer]) if (policy[user] !== undefined) seen[user] = policy[user];
  return seen;
}

/** A tag as `viewer` may see it. */
export function tagSeenBy(view: TagView, viewer: string): TagView {
  return { ...view, policy: policySeenBy(view.owner, view.policy, viewer) };
}

/** tag_new or tag_modify to every user of `policy`, each with the part it may see. */
function emitTag(
  w: UnitOfWork,
  name: 'tag_new' | 'tag_modify',
  uuid: string,
  view: TagView,
  policy = view.policy,
) {
  for (const user of Object.keys(policy))
    w.emit([user], name, tagPayload(uuid, view, policySeenBy(view.owner, policy, user)));
}

/** A tag if the user may read it, with its policy; wrong-tag otherwise. */
export async function getTagForRead(
  db: Db,
  user: string,
  uuid: string,
): Promise<{ row: repo.TagRow; view: TagView }> {
  const row = await repo.findTag(db, uuid);
  if (!row) throw new ApiError('wrong-tag', 'unknown tag');
  const view = await tagView(db, row);
  if ((view.policy[user] ?? 0) < Level.read) throw new ApiError('wrong-tag', 'unknown tag');
  return { row, view };
}

/** Every tag the user may read. */
export async function listTags(db: Db, user: string): Promise<Map<string, TagView>> {
  const rows = await repo.listReadableTags(db, user);
  const policies = await policiesOf(
    db,
    rows.map((row) => row.uuid),
  );
  const result = new Map<string, TagView>();
  for (const row of rows) result.set(row.uuid, toTagView(row, policies.get(row.uuid)));
  return result;
}

/** Most tags a user creates (POST /api/tag); system, share and chat tags are not counted. */
export const CUSTOM_TAG_MAX = 1000;

/**
 * A custom tag, or a tag held by an object type for one object (`kind: 'object'`, which the
 * tag calls cannot change or put on objects); tag_new to every user in its policy.
 * quota-exceeded beyond CUSTOM_TAG_MAX custom tags of the owner.
 */
export async function createTag(clock: Clock, w: UnitOfWork, owner: string, input: NewTag): Promise<string> {
  const kind = input.kind ?? 'custom';
  if (kind === 'custom' && (await repo.countTags(w.trx, owner, 'custom')) >= CUSTOM_TAG_MAX)
    throw new ApiError('quota-exceeded', `at most ${CUSTOM_TAG_MAX} tags per user`);
  const uuid = newUuid();
  const row: repo.TagRow = {
    uuid,
    owner,
    kind,
    name: null,
    label: input.label,
    foreign_use: input.foreignUse ? 1 : 0,
    time: nowSeconds(clock),
    sort_key: uuidSortKey(uuid),
  };
  await repo.insertTag(w.trx, row);
  const entries = Object.entries(input.policy).filter(([, level]) => level > 0);
  await repo.insertPolicies(w.trx, [
    {
      tag: uuid,
      user_uuid: owner,
      level: Level.owner,
      grant_level: grantOf(owner, owner, Level.owner, input.foreignUse),
    },
    ...entries.map(([user, level]) => ({
      tag: uuid,
      user_uuid: user,
      level,
      grant_level: grantOf(user, owner, level, input.foreignUse),
    })),
  ]);
  const view = await tagView(w.trx, row);
  emitTag(w, 'tag_new', uuid, view);
  return uuid;
}

/** Access of every user to each object before a change that may alter it. */
async function snapshot(db: Db, objects: readonly string[]) {
  const result = new Map<string, { row: repo.ObjectRow; levels: Map<string, number> }>();
  for (const uuid of objects) {
    const row = await repo.findObject(db, uuid);
    if (row) result.set(uuid, { row, levels: await levelsOf(db, row) });
  }
  return result;
}

/**
 * Relabels a tag, changes its policy (levels 0 remove users) or its foreign use. Objects
 * carrying the tag are re-derived: users who lose access get object_unshare, and what they
 * shared further goes too. tag_modify to users who could read the tag before or after, with
 * 0 for those who lost it.
 */
export async function updateTag(
  w: UnitOfWork,
  user: string | undefined,
  tag: repo.TagRow,
  changes: TagChanges,
): Promise<void> {
  const beforeView = await tagView(w.trx, tag);
  const accessChanges = changes.policy !== undefined || changes.foreignUse !== undefined;
  const objects = accessChanges ? await repo.listTaggedObjectUuids(w.trx, tag.uuid) : [];
  const snapshots = await snapshot(w.trx, objects);

  const foreignUse = changes.foreignUse ?? tag.foreign_use === 1;
  const updated: repo.TagRow = {
    ...tag,
    label: changes.label ?? tag.label,
    foreign_use: foreignUse ? 1 : 0,
  };
  if (changes.label !== undefined || changes.foreignUse !== undefined) {
    await repo.updateTag(w.trx, tag.uuid, { label: updated.label, foreign_use: updated.foreign_use });
  }
  if (changes.foreignUse !== undefined) {
    await repo.setOwnerGrant(
      w.trx,
      tag.uuid,
      tag.owner,
      grantOf(tag.owner, tag.owner, Level.owner, foreignUse),
    );
  }
  const entries = Object.entries(changes.policy ?? {}).filter(([other]) => other !== tag.owner);
  const keep = new Map(Object.entries(beforeView.policy));
  for (const [other, level] of entries) {
    if (level > 0) keep.set(other, level);
    else keep.delete(other);
  }
  await repo.deletePolicies(
    w.trx,
    tag.uuid,
    entries.filter(([, level]) => level <= 0).map(([other]) => other),
  );
  const refreshed = [...keep].filter(([other]) => other !== tag.owner);
  await repo.insertPolicies(
    w.trx,
    refreshed.map(([other, level]) => ({
      tag: tag.uuid,
      user_uuid: other,
      level,
      grant_level: grantOf(other, tag.owner, level, foreignUse),
    })),
  );
  for (const [, { row, levels }] of snapshots) await reconcile(w, row, levels, user, [], [], []);

  const afterView = await tagView(w.trx, updated);
  const policy: Record<string, number> = { ...afterView.policy };
  for (const other of Object.keys(beforeView.policy)) if (!(other in policy)) policy[other] = 0;
  emitTag(w, 'tag_modify', tag.uuid, afterView, policy);
}

/** Deletes a custom tag; it leaves every object (re-derived as for a policy change). */
export async function deleteTag(w: UnitOfWork, user: string, tag: repo.TagRow): Promise<void> {
  const view = await tagView(w.trx, tag);
  const snapshots = await snapshot(w.trx, await repo.listTaggedObjectUuids(w.trx, tag.uuid));
  await repo.deleteTag(w.trx, tag.uuid);
  for (const [, { row, levels }] of snapshots) await reconcile(w, row, levels, user, [], [], []);
  w.emit(Object.keys(view.policy), 'tag_delete', { tag: tag.uuid });
}
