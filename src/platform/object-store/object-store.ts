/**
 * The tag-based object store (decisions.md "Objects and tags"; spec Conventions 9 and 14,
 * "Events"): every object type (contact, fax, recording, xobject, ...) is a row here with its
 * type's fields as JSON, so that access, tags, trash and purge, volume accounting and the
 * object events exist once. An object type declares its name and its wrong-... status and
 * calls these functions from its service.
 *
 * Writes run in `write()`: one transaction, whose events are sent and whose content files are
 * removed only after it commits. Inside it, query only through `w.trx`: on SQLite the
 * transaction holds the only connection, so a query through another handle would wait forever.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../database/database.js';
import { ApiError, type ApiStatus } from '../errors.js';
import type { EventHub } from '../events/event-hub.js';
import { newUuid, nowSeconds, uuidSortKey } from '../ids.js';
import type { PageQuery } from '../paging.js';
import {
  derive,
  effectiveLevels,
  grantOf,
  Level,
  levelNeeded,
  mayUseTag,
  SHARE_TAGS,
  type ShareTagName,
  SYSTEM_TAGS,
  type TagOnObject,
} from './grants.js';
import * as repo from './object-store.repository.js';

export type { ListedObject, ObjectRow, TagKind, TagRow } from './object-store.repository.js';

/** What an object type declares to live in the store. */
export interface ObjectTypeDefinition {
  /** The type name used in events, tag listings and `type` filters. */
  readonly type: string;
  /** Status for an object of this type that the user cannot read (Conventions 14). */
  readonly wrong: ApiStatus;
  /**
   * Removes what the type keeps outside the object row and its content directory; runs in the
   * purging transaction. Work that must wait for the commit (removing files) goes to `later`.
   */
  readonly onPurge?: (
    trx: Db,
    object: repo.ObjectRow,
    later: (task: () => Promise<void>) => void,
  ) => Promise<void>;
}

export interface ObjectStoreDeps {
  readonly db: Db;
  readonly hub: EventHub;
  readonly dataDir: string;
  readonly log: FastifyBaseLogger;
  /** The storage volume a user may use, in bytes (from the feature packs). */
  readonly volumeQuota: (db: Db, user: string) => Promise<number>;
}

/** The generic type for calls on any object (`/api/object/...`). */
export const ANY_OBJECT: ObjectTypeDefinition = { type: '', wrong: 'wrong-object' };

interface PendingEvent {
  users: string[];
  name: string;
  payload: Record<string, unknown>;
}

/** One write transaction: its events and file removals wait for the commit. */
export class Write {
  readonly events: PendingEvent[] = [];
  readonly afterCommit: (() => Promise<void>)[] = [];
  constructor(readonly trx: Db) {}

  emit(users: Iterable<string>, name: string, payload: Record<string, unknown>): void {
    const list = [...new Set(users)];
    if (list.length > 0) this.events.push({ users: list, name, payload });
  }
}

/** An object the caller may access, with the caller's level on it. */
export interface AccessedObject {
  readonly row: repo.ObjectRow;
  readonly level: number;
}

export interface NewObject {
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

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Bytes the row takes beside its content files. */
function rowBytes(description: string, data: string): number {
  return byteLength(description) + byteLength(data);
}

function toTagOnObject(rows: Awaited<ReturnType<typeof repo.listObjectGrants>>): TagOnObject[] {
  const tags = new Map<string, TagOnObject & { policy: Map<string, { level: number; grant: number }> }>();
  for (const row of rows) {
    let tag = tags.get(row.tag);
    if (!tag) {
      tag = {
        tag: row.tag,
        attacher: row.attacher,
        tagOwner: row.tag_owner,
        name: row.name,
        foreignUse: row.foreign_use === 1,
        policy: new Map(),
      };
      tags.set(row.tag, tag);
    }
    tag.policy.set(row.policy_user, { level: row.level, grant: row.grant_level });
  }
  return [...tags.values()];
}

function readersOf(levels: Map<string, number>): string[] {
  return [...levels].filter(([, level]) => level >= Level.read).map(([user]) => user);
}

export class ObjectStore {
  private readonly types = new Map<string, ObjectTypeDefinition>();

  constructor(private readonly deps: ObjectStoreDeps) {}

  get db(): Db {
    return this.deps.db;
  }

  /** Declares an object type; its purge hook runs when one of its objects is purged. */
  defineType(definition: ObjectTypeDefinition): ObjectTypeDefinition {
    if (this.types.has(definition.type)) throw new Error(`object type ${definition.type} defined twice`);
    this.types.set(definition.type, definition);
    return definition;
  }

  /** Runs `fn` in one transaction; sends its events and removes purged files after the commit. */
  async write<T>(fn: (w: Write) => Promise<T>): Promise<T> {
    const { result, w } = await this.deps.db.transaction().execute(async (trx) => {
      const w = new Write(trx);
      return { result: await fn(w), w };
    });
    for (const event of w.events) this.deps.hub.emit({ users: event.users }, event.name, event.payload);
    for (const task of w.afterCommit) {
      await task().catch((error: unknown) => this.deps.log.error({ err: error }, 'object cleanup failed'));
    }
    return result;
  }

  /** Directory of an object's content files; purge removes it. */
  contentDir(uuid: string): string {
    return path.join(this.deps.dataDir, 'objects', uuid.slice(0, 2), uuid);
  }

  // ---------------------------------------------------------------- access

  /** The caller's level on an object (0 when none, or when it does not exist). */
  async accessLevel(db: Db, user: string, uuid: string): Promise<number> {
    const found = await this.findWithLevel(db, user, uuid);
    return found?.level ?? 0;
  }

  /** The object if the user may read it; otherwise the type's wrong-... status (Conventions 14). */
  async getForRead(
    db: Db,
    user: string,
    uuid: string,
    definition: ObjectTypeDefinition = ANY_OBJECT,
  ): Promise<AccessedObject> {
    const found = await this.findWithLevel(db, user, uuid);
    if (
      !found ||
      found.level < Level.read ||
      (definition.type !== '' && found.row.type !== definition.type)
    ) {
      throw new ApiError(definition.wrong, 'unknown object');
    }
    return found;
  }

  /** The object if the user may change it: wrong-... when unreadable, access-denied when read-only. */
  async getForWrite(
    db: Db,
    user: string,
    uuid: string,
    definition: ObjectTypeDefinition = ANY_OBJECT,
  ): Promise<AccessedObject> {
    const found = await this.getForRead(db, user, uuid, definition);
    if (found.level < Level.write) throw new ApiError('access-denied', 'write access needed');
    return found;
  }

  private async findWithLevel(db: Db, user: string, uuid: string): Promise<AccessedObject | undefined> {
    const row = await repo.findObjectWithGrant(db, uuid, user);
    if (!row) return undefined;
    const { grant_level: grant, ...object } = row;
    const level = object.owner === user ? Level.owner : object.trashed === 1 ? 0 : Number(grant ?? 0);
    return { row: object, level };
  }

  /** Every user with access to the object and their level. */
  async levelsOf(db: Db, row: repo.ObjectRow): Promise<Map<string, number>> {
    const derivation = derive(row.owner, toTagOnObject(await repo.listObjectGrants(db, row.uuid)));
    return effectiveLevels(derivation, row.owner, row.trashed === 1);
  }

  /** Users who may read the object. */
  async readers(db: Db, row: repo.ObjectRow): Promise<string[]> {
    return readersOf(await this.levelsOf(db, row));
  }

  // ---------------------------------------------------------------- views

  /** For each viewer, the object's tags they may read. */
  async visibleTags(db: Db, objects: readonly string[], viewers: readonly string[]) {
    const result = new Map<string, Map<string, string[]>>();
    for (const row of await repo.listVisibleTags(db, objects, viewers)) {
      let perObject = result.get(row.user_uuid);
      if (!perObject) {
        perObject = new Map();
        result.set(row.user_uuid, perObject);
      }
      const list = perObject.get(row.object) ?? [];
      list.push(row.tag);
      perObject.set(row.object, list);
    }
    return (viewer: string, object: string): string[] => result.get(viewer)?.get(object) ?? [];
  }

  /** Fields every object shows: owner, time, description and the tags the viewer may read. */
  async describe(db: Db, viewer: string, row: repo.ObjectRow) {
    const tags = await this.visibleTags(db, [row.uuid], [viewer]);
    return { owner: row.owner, time: row.time, description: row.description, tag: tags(viewer, row.uuid) };
  }

  /** The parsed type fields of an object. */
  dataOf<T>(row: repo.ObjectRow): T {
    return JSON.parse(row.data) as T;
  }

  // ---------------------------------------------------------------- objects

  /** Creates an object with the owner's tag_all (and given tags); object_new to users with access. */
  async createObject(w: Write, input: NewObject): Promise<repo.ObjectRow> {
    const uuid = newUuid();
    const now = nowSeconds();
    const description = input.description ?? '';
    const data = JSON.stringify(input.data ?? {});
    const volume = rowBytes(description, data) + (input.contentBytes ?? 0);
    if (input.checkQuota !== false) await this.checkQuota(w.trx, input.owner, volume);
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
      trashed: 0,
    };
    await repo.insertObject(w.trx, row);
    const userTags = await this.userTags(w.trx, input.owner);
    const tags = [userTags.tag_all, ...(input.tags ?? [])];
    await repo.insertObjectTags(
      w.trx,
      tags.map((tag) => ({
        object: uuid,
        tag,
        user_uuid: input.owner,
        sort_key: row.sort_key,
        time: now,
        type: row.type,
      })),
    );
    const levels = await this.levelsOf(w.trx, row);
    await this.emitPerViewer(w, readersOf(levels), row, 'object_new', {});
    return row;
  }

  /**
   * Changes an object's description, status, type fields or content size; object_modify to its
   * readers. `user` is the user who asked (absent for changes the platform makes itself).
   */
  async updateObject(
    w: Write,
    row: repo.ObjectRow,
    changes: ObjectChanges,
    user: string | undefined,
  ): Promise<repo.ObjectRow> {
    const description = changes.description ?? row.description;
    const data = changes.data === undefined ? row.data : JSON.stringify(changes.data);
    const contentBytes = changes.contentBytes ?? row.volume - rowBytes(row.description, row.data);
    const volume = rowBytes(description, data) + Math.max(0, contentBytes);
    if (volume > row.volume) await this.checkQuota(w.trx, row.owner, volume - row.volume);
    const updated: repo.ObjectRow = {
      ...row,
      description,
      data,
      volume,
      status: changes.status === undefined ? row.status : changes.status,
      modified: nowSeconds(),
    };
    await repo.updateObject(w.trx, row.uuid, {
      description,
      data,
      volume,
      status: updated.status,
      modified: updated.modified,
    });
    const readers = await this.readers(w.trx, updated);
    w.emit(readers, 'object_modify', {
      ...this.basePayload(updated),
      ...(user ? { user } : {}),
    });
    return updated;
  }

  /**
   * Conventions 9: moves the object to its owner's trash, or with `purge` removes it with its
   * content. object_delete to the users who could read it. Purging is for the owner only.
   */
  async deleteObject(w: Write, user: string, found: AccessedObject, purge: boolean): Promise<void> {
    const { row } = found;
    if (found.level < Level.write) throw new ApiError('access-denied', 'write access needed');
    if (purge && row.owner !== user) throw new ApiError('access-denied', 'only the owner purges');
    const readers = await this.readers(w.trx, row);
    if (purge) {
      await this.purgeRows(w, row);
    } else {
      if (row.trashed === 1) return;
      const tags = await this.userTags(w.trx, row.owner);
      await repo.updateObject(w.trx, row.uuid, { trashed: 1, modified: nowSeconds() });
      await repo.insertObjectTags(w.trx, [
        {
          object: row.uuid,
          tag: tags.tag_trash,
          user_uuid: row.owner,
          sort_key: row.sort_key,
          time: row.time,
          type: row.type,
        },
      ]);
    }
    w.emit(readers, 'object_delete', { ...this.basePayload(row), user, ...(purge ? { purge: true } : {}) });
  }

  /** DELETE /api/trash: purges every object in the user's trash; trash_purge to the user. */
  async emptyTrash(w: Write, user: string): Promise<number> {
    const rows = await repo.listTrashedObjects(w.trx, user);
    for (const row of rows) await this.purgeRows(w, row);
    w.emit([user], 'trash_purge', {});
    return rows.length;
  }

  /**
   * Account deletion, inside the deleting transaction: the user's objects are purged with their
   * content (object_delete) and their links end (what was shared with or through them is
   * unshared). Answers what must happen after the commit: the events and the file removal.
   */
  async removeUser(trx: Db, user: string): Promise<() => Promise<void>> {
    const w = new Write(trx);
    for (const row of await repo.listOwnedObjects(trx, user)) {
      const readers = await this.readers(trx, row);
      await this.purgeRows(w, row);
      w.emit(readers, 'object_delete', { ...this.basePayload(row), user, purge: true });
    }
    for (const link of await repo.listUserLinks(trx, user)) await this.unlinkUsers(w, user, link.other_uuid);
    return async () => {
      for (const event of w.events) this.deps.hub.emit({ users: event.users }, event.name, event.payload);
      for (const task of w.afterCommit) {
        await task().catch((error: unknown) => this.deps.log.error({ err: error }, 'object cleanup failed'));
      }
    };
  }

  private async purgeRows(w: Write, row: repo.ObjectRow): Promise<void> {
    await this.types.get(row.type)?.onPurge?.(w.trx, row, (task) => w.afterCommit.push(task));
    // Tags, comments, links and metadata go with the row (foreign keys cascade).
    await repo.deleteObject(w.trx, row.uuid);
    const dir = this.contentDir(row.uuid);
    w.afterCommit.push(() => fs.rm(dir, { recursive: true, force: true }));
  }

  /** quota-exceeded when the owner's objects would take more than the quota. */
  async checkQuota(db: Db, owner: string, extraBytes: number): Promise<void> {
    if (extraBytes <= 0) return;
    const used = await repo.sumVolume(db, owner);
    const quota = await this.deps.volumeQuota(db, owner);
    if (used + extraBytes > quota) throw new ApiError('quota-exceeded', 'storage volume quota exceeded');
  }

  /** Bytes of storage volume a user's objects take (`feature.used.volume`). */
  usedVolume(user: string, db: Db = this.deps.db): Promise<number> {
    return repo.sumVolume(db, user);
  }

  /** The user's own objects of one type (and subtype), paged by time (not trashed). */
  listOwn(db: Db, owner: string, type: string, page: PageQuery, defaultCount: number, subtype?: string) {
    return repo.listOwnObjects(db, owner, type, subtype, page, defaultCount);
  }

  // ---------------------------------------------------------------- tags on objects

  /** One page of a tag's objects; wrong-tag when the user may not read the tag. */
  async listByTag(
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
    const tags = await this.visibleTags(
      db,
      rows.map((row) => row.uuid),
      [user],
    );
    return rows.map((row) => ({ ...row, tag: tags(user, row.uuid) }));
  }

  /**
   * POST /api/object/{uuid}/tag: puts tags on the object and takes tags off. Personal tags need
   * read access to the object; tags that share it with others need propagate. Taking the
   * owner's trash tag off restores the object. Answers the tags the user sees afterwards.
   */
  async tagObject(
    w: Write,
    user: string,
    found: AccessedObject,
    add: readonly string[],
    remove: readonly string[],
  ): Promise<string[]> {
    const { row } = found;
    const wanted = [...new Set([...add, ...remove])];
    const tagRows = new Map((await repo.findTags(w.trx, wanted)).map((tag) => [tag.uuid, tag]));
    const policies = await this.policiesOf(w.trx, wanted);
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
      const onObject = this.tagOnObject(tag, policies.get(uuid)!, user);
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
      const onObject = this.tagOnObject(tag, policies.get(uuid)!, user);
      if (user !== row.owner && !mayUseTag(onObject, user))
        throw new ApiError('access-denied', `tag ${uuid} is not yours to remove`);
      if (toAdd.includes(uuid)) throw new ApiError('wrong-syntax', `tag ${uuid} both added and removed`);
      if (current.has(uuid)) {
        toRemove.push(uuid);
        if (tag.name === 'tag_trash') restore = true;
      }
    }
    if (toAdd.length > 0 || toRemove.length > 0) {
      const before = await this.levelsOf(w.trx, row);
      await repo.insertObjectTags(
        w.trx,
        toAdd.map((tag) => ({
          object: row.uuid,
          tag,
          user_uuid: user,
          sort_key: row.sort_key,
          time: row.time,
          type: row.type,
        })),
      );
      await repo.deleteObjectTags(w.trx, row.uuid, toRemove);
      let after = row;
      if (restore) {
        after = { ...row, trashed: 0 };
        await repo.updateObject(w.trx, row.uuid, { trashed: 0 });
      }
      await this.reconcile(w, after, before, user, [...toAdd, ...toRemove], toAdd, toRemove);
    }
    const tags = await this.visibleTags(w.trx, [row.uuid], [user]);
    return tags(user, row.uuid);
  }

  /** Puts tags of the object's owner on it without access checks (the platform's own tagging). */
  async addOwnerTags(w: Write, row: repo.ObjectRow, tags: readonly string[]): Promise<void> {
    if (tags.length === 0) return;
    const before = await this.levelsOf(w.trx, row);
    await repo.insertObjectTags(
      w.trx,
      tags.map((tag) => ({
        object: row.uuid,
        tag,
        user_uuid: row.owner,
        sort_key: row.sort_key,
        time: row.time,
        type: row.type,
      })),
    );
    await this.reconcile(w, row, before, undefined, [...tags], [...tags], []);
  }

  private tagOnObject(
    tag: repo.TagRow,
    policy: Map<string, { level: number; grant: number }>,
    attacher: string,
  ) {
    return {
      tag: tag.uuid,
      attacher,
      tagOwner: tag.owner,
      name: tag.name,
      foreignUse: tag.foreign_use === 1,
      policy,
    };
  }

  private async policiesOf(db: Db, tags: readonly string[]) {
    const result = new Map<string, Map<string, { level: number; grant: number }>>();
    for (const row of await repo.listPolicies(db, tags)) {
      let policy = result.get(row.tag);
      if (!policy) {
        policy = new Map();
        result.set(row.tag, policy);
      }
      policy.set(row.user_uuid, { level: row.level, grant: row.grant_level });
    }
    return result;
  }

  /**
   * After a change of an object's tags or of a tag's policy: drops the tags that can no longer
   * be derived, keeps tag_shared of every user the object is shared with, and sends
   * object_share, object_unshare and object_tag by comparing access before and after.
   */
  private async reconcile(
    w: Write,
    row: repo.ObjectRow,
    before: Map<string, number>,
    user: string | undefined,
    changed: readonly string[],
    added: readonly string[],
    removed: readonly string[],
  ): Promise<void> {
    const tags = toTagOnObject(await repo.listObjectGrants(w.trx, row.uuid));
    const derivation = derive(row.owner, tags);
    await repo.deleteObjectTags(w.trx, row.uuid, derivation.dropped);
    // tag_shared of each user the object is shared with lists what others share with them.
    const sharedWith = [...derivation.levels.keys()].filter((other) => other !== row.owner);
    if (sharedWith.length > 0) {
      const present = new Set(tags.map((tag) => tag.tag));
      const shared = await repo.findNamedTags(w.trx, sharedWith, ['tag_shared']);
      await repo.insertObjectTags(
        w.trx,
        shared
          .filter((tag) => !present.has(tag.uuid))
          .map((tag) => ({
            object: row.uuid,
            tag: tag.uuid,
            user_uuid: tag.owner,
            sort_key: row.sort_key,
            time: row.time,
            type: row.type,
          })),
      );
    }
    const after = effectiveLevels(derivation, row.owner, row.trashed === 1);
    const gained = readersOf(after).filter((other) => !before.has(other));
    const lost = readersOf(before).filter((other) => !after.has(other));
    const kept = readersOf(after).filter((other) => before.has(other));
    const actor = user ? { user } : {};
    await this.emitPerViewer(w, gained, row, 'object_share', actor);
    w.emit(lost, 'object_unshare', { ...this.basePayload(row), ...actor });

    const allChanged = [...new Set([...changed, ...derivation.dropped])];
    if (allChanged.length === 0 || kept.length === 0) return;
    const policies = await this.policiesOf(w.trx, allChanged);
    const canSee = (viewer: string, tag: string) =>
      (policies.get(tag)?.get(viewer)?.level ?? 0) >= Level.read;
    const recipients = kept.filter((viewer) => allChanged.some((tag) => canSee(viewer, tag)));
    if (recipients.length === 0) return;
    const visible = await this.visibleTags(w.trx, [row.uuid], recipients);
    const removedAll = [...new Set([...removed, ...derivation.dropped])];
    for (const viewer of recipients) {
      w.emit([viewer], 'object_tag', {
        ...this.basePayload(row),
        ...actor,
        tag: visible(viewer, row.uuid),
        tag_add: added.filter((tag) => canSee(viewer, tag)),
        tag_delete: removedAll.filter((tag) => canSee(viewer, tag)),
      });
    }
  }

  private basePayload(row: repo.ObjectRow) {
    return { object: row.uuid, type: row.type, owner: row.owner, description: row.description };
  }

  /** An object event whose `tag` field differs per recipient (each sees only tags they may read). */
  private async emitPerViewer(
    w: Write,
    viewers: readonly string[],
    row: repo.ObjectRow,
    name: string,
    extra: Record<string, unknown>,
  ): Promise<void> {
    if (viewers.length === 0) return;
    const visible = await this.visibleTags(w.trx, [row.uuid], viewers);
    for (const viewer of viewers) {
      w.emit([viewer], name, { ...this.basePayload(row), ...extra, tag: visible(viewer, row.uuid) });
    }
  }

  // ---------------------------------------------------------------- tags

  /** The system and share tags every user gets at creation (run in the creating transaction). */
  async createUserTags(trx: Db, user: string): Promise<void> {
    const now = nowSeconds();
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
    await repo.insertTags(trx, rows);
    await repo.insertPolicies(
      trx,
      rows.map((row) => ({ tag: row.uuid, user_uuid: user, level: Level.owner, grant_level: 0 })),
    );
  }

  /** The uuids of a user's system and share tags. */
  async userTags(db: Db, user: string): Promise<UserTags> {
    const rows = await repo.findNamedTags(db, [user], ALL_TAG_NAMES);
    const tags = Object.fromEntries(rows.map((row) => [row.name, row.uuid])) as Partial<UserTags>;
    for (const name of ALL_TAG_NAMES) {
      if (!tags[name]) throw new Error(`user ${user} has no ${name} tag`);
    }
    return tags as UserTags;
  }

  /** A tag if the user may read it, with its policy; wrong-tag otherwise. */
  async getTagForRead(db: Db, user: string, uuid: string): Promise<{ row: repo.TagRow; view: TagView }> {
    const row = await repo.findTag(db, uuid);
    if (!row) throw new ApiError('wrong-tag', 'unknown tag');
    const view = await this.tagView(db, row);
    if ((view.policy[user] ?? 0) < Level.read) throw new ApiError('wrong-tag', 'unknown tag');
    return { row, view };
  }

  /** Every tag the user may read. */
  async listTags(db: Db, user: string): Promise<Map<string, TagView>> {
    const rows = await repo.listReadableTags(db, user);
    const policies = await this.policiesOf(
      db,
      rows.map((row) => row.uuid),
    );
    const result = new Map<string, TagView>();
    for (const row of rows) result.set(row.uuid, this.toTagView(row, policies.get(row.uuid)));
    return result;
  }

  private async tagView(db: Db, row: repo.TagRow): Promise<TagView> {
    const policies = await this.policiesOf(db, [row.uuid]);
    return this.toTagView(row, policies.get(row.uuid));
  }

  private toTagView(row: repo.TagRow, policy: Map<string, { level: number }> | undefined): TagView {
    return {
      owner: row.owner,
      label: row.label,
      kind: row.kind,
      foreign_use: row.foreign_use === 1,
      policy: Object.fromEntries([...(policy ?? [])].map(([user, entry]) => [user, entry.level])),
    };
  }

  private tagPayload(uuid: string, view: TagView, policy: Record<string, number> = view.policy) {
    return { tag: uuid, owner: view.owner, label: view.label, foreign_use: view.foreign_use, policy };
  }

  /**
   * A custom tag, or a tag held by an object type for one object (`kind: 'object'`, which the
   * tag calls cannot change or put on objects); tag_new to every user in its policy.
   */
  async createTag(
    w: Write,
    owner: string,
    input: {
      label: string;
      policy: Record<string, number>;
      foreignUse: boolean;
      kind?: 'custom' | 'object';
    },
  ): Promise<string> {
    const uuid = newUuid();
    const now = nowSeconds();
    const row: repo.TagRow = {
      uuid,
      owner,
      kind: input.kind ?? 'custom',
      name: null,
      label: input.label,
      foreign_use: input.foreignUse ? 1 : 0,
      time: now,
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
    const view = await this.tagView(w.trx, row);
    w.emit(Object.keys(view.policy), 'tag_new', this.tagPayload(uuid, view));
    return uuid;
  }

  /**
   * Relabels a tag, changes its policy (levels 0 remove users) or its foreign use. Objects
   * carrying the tag are re-derived: users who lose access get object_unshare, and what they
   * shared further goes too. tag_modify to users who could read the tag before or after, with
   * 0 for those who lost it.
   */
  async updateTag(w: Write, user: string | undefined, tag: repo.TagRow, changes: TagChanges): Promise<void> {
    const beforeView = await this.tagView(w.trx, tag);
    const accessChanges = changes.policy !== undefined || changes.foreignUse !== undefined;
    const objects = accessChanges ? await repo.listTaggedObjectUuids(w.trx, tag.uuid) : [];
    const snapshots = await this.snapshot(w.trx, objects);

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
    for (const [, snapshot] of snapshots)
      await this.reconcile(w, snapshot.row, snapshot.levels, user, [], [], []);

    const afterView = await this.tagView(w.trx, updated);
    const policy: Record<string, number> = { ...afterView.policy };
    for (const other of Object.keys(beforeView.policy)) if (!(other in policy)) policy[other] = 0;
    w.emit(Object.keys(policy), 'tag_modify', this.tagPayload(tag.uuid, afterView, policy));
  }

  /** Deletes a custom tag; it leaves every object (re-derived as for a policy change). */
  async deleteTag(w: Write, user: string, tag: repo.TagRow): Promise<void> {
    const view = await this.tagView(w.trx, tag);
    const snapshots = await this.snapshot(w.trx, await repo.listTaggedObjectUuids(w.trx, tag.uuid));
    await repo.deleteTag(w.trx, tag.uuid);
    for (const [, snapshot] of snapshots)
      await this.reconcile(w, snapshot.row, snapshot.levels, user, [], [], []);
    w.emit(Object.keys(view.policy), 'tag_delete', { tag: tag.uuid });
  }

  /** Access of every user to each object before a change that may alter it. */
  private async snapshot(db: Db, objects: readonly string[]) {
    const result = new Map<string, { row: repo.ObjectRow; levels: Map<string, number> }>();
    for (const uuid of objects) {
      const row = await repo.findObject(db, uuid);
      if (row) result.set(uuid, { row, levels: await this.levelsOf(db, row) });
    }
    return result;
  }

  /**
   * Two users linked: each appears in the other's share tags at the tag's level
   * (decisions.md "Sharing"); what the other had tagged with them becomes shared.
   */
  async linkShareTags(w: Write, owner: string, other: string): Promise<void> {
    const tags = await repo.findNamedTags(w.trx, [owner], Object.keys(SHARE_TAGS));
    for (const tag of tags) {
      await this.updateTag(w, undefined, tag, { policy: { [other]: SHARE_TAGS[tag.name as ShareTagName] } });
    }
  }

  /** Two users unlinked: `other` leaves every policy of `owner`'s tags and loses what it gave. */
  async unlinkTags(w: Write, owner: string, other: string): Promise<void> {
    for (const tag of await repo.listTagsNaming(w.trx, owner, other)) {
      await this.updateTag(w, undefined, tag, { policy: { [other]: 0 } });
    }
  }

  // ---------------------------------------------------------------- user links

  /** The users linked with `user` (all, or those among `others`). */
  async linkedUsers(db: Db, user: string, others?: readonly string[]) {
    return repo.listUserLinks(db, user, others);
  }

  /** Links two users: each joins the other's share tags (decisions.md "Sharing"). */
  async linkUsers(w: Write, a: string, b: string): Promise<void> {
    await repo.insertUserLink(w.trx, a, b, nowSeconds());
    await this.linkShareTags(w, a, b);
    await this.linkShareTags(w, b, a);
  }

  /** Unlinks two users: each leaves every policy of the other's tags, with what derived from it. */
  async unlinkUsers(w: Write, a: string, b: string): Promise<void> {
    await repo.deleteUserLink(w.trx, a, b);
    await this.unlinkTags(w, a, b);
    await this.unlinkTags(w, b, a);
  }
}
