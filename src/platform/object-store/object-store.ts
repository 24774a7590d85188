/**
 * The tag-based object store (decisions.md "Objects and tags"; spec Conventions 9 and 14,
 * "Events"): every object type (contact, fax, recording, xobject, ...) is a row here with its
 * type's fields as JSON, so that access, tags, trash and purge, volume accounting and the
 * object events exist once. An object type declares its name and its wrong-... status and
 * calls these functions from its service.
 *
 * This class is the one handle areas get; the work is done by one file per concern:
 * access.ts, views.ts, objects.ts, quota.ts, tags.ts, object-tags.ts and user-links.ts.
 * Writes take the caller's unit of work (src/platform/database/unit-of-work.ts): their events
 * and a type's file removal run after its commit.
 */
import type { Clock } from '../clock.js';
import type { Db } from '../database/database.js';
import type { UnitOfWork, Writer } from '../database/unit-of-work.js';
import type { PageQuery } from '../paging.js';
import * as access from './access.js';
import * as repo from './object-store.repository.js';
import * as objectTags from './object-tags.js';
import * as objects from './objects.js';
import * as quota from './quota.js';
import * as tags from './tags.js';
import * as userLinks from './user-links.js';
import * as views from './views.js';

export { type AccessedObject, ANY_OBJECT, type ObjectTypeDefinition } from './access.js';
export type { ListedObject, ObjectRow, TagKind, TagRow } from './object-store.repository.js';
export type { NewObject, ObjectChanges } from './objects.js';
export type { UsageDifference } from './quota.js';
export type { NewTag, TagChanges, TagView, UserTags } from './tags.js';

export interface ObjectStoreDeps {
  readonly writer: Writer;
  /** The storage volume a user may use, in bytes (from the feature packs). */
  readonly volumeQuota: quota.VolumeQuota;
  /** The wall clock of the objects', tags' and user links' stamps. */
  readonly clock: Clock;
}

export class ObjectStore {
  private readonly types = new Map<string, access.ObjectTypeDefinition>();
  private readonly context: objects.ObjectContext;

  constructor(private readonly deps: ObjectStoreDeps) {
    const userTags = new tags.UserTagsCache();
    this.userTags = (db, user) => userTags.get(db, user);
    this.context = { types: this.types, volumeQuota: deps.volumeQuota, clock: deps.clock, userTags };
  }

  get db(): Db {
    return this.deps.writer.db;
  }

  /** Declares an object type; its purge hook runs when one of its objects is purged. */
  defineType(definition: access.ObjectTypeDefinition): access.ObjectTypeDefinition {
    if (this.types.has(definition.type)) throw new Error(`object type ${definition.type} defined twice`);
    this.types.set(definition.type, definition);
    return definition;
  }

  /** Runs `fn` in one new unit of work (see Writer.write). */
  write<T>(fn: (w: UnitOfWork) => Promise<T>): Promise<T> {
    return this.deps.writer.write(fn);
  }

  /** Runs `fn`, which runs one statement, as a unit of work of its own (see Writer.writeStatement). */
  writeStatement<T>(fn: (w: UnitOfWork) => Promise<T>): Promise<T> {
    return this.deps.writer.writeStatement(fn);
  }

  // access (access.ts)
  readonly accessLevel = access.accessLevel;
  readonly getForRead = access.getForRead;
  readonly getForReadWithTags = access.getForReadWithTags;
  readonly getForWrite = access.getForWrite;
  readonly levelsOf = access.levelsOf;
  readonly readers = access.readers;

  // views (views.ts)
  readonly visibleTags = views.visibleTags;
  readonly describe = views.describe;
  readonly dataOf = views.dataOf;

  // objects (objects.ts)
  createObject(w: UnitOfWork, input: objects.NewObject): Promise<repo.ObjectRow> {
    return objects.createObject(this.context, w, input);
  }

  updateObject(
    w: UnitOfWork,
    row: repo.ObjectRow,
    changes: objects.ObjectChanges,
    user: string | undefined,
  ): Promise<repo.ObjectRow> {
    return objects.updateObject(this.context, w, row, changes, user);
  }

  deleteObject(w: UnitOfWork, user: string, found: access.AccessedObject, purge: boolean): Promise<void> {
    return objects.deleteObject(this.context, w, user, found, purge);
  }

  emptyTrash(w: UnitOfWork, user: string): Promise<number> {
    return objects.emptyTrash(this.context, w, user);
  }

  removeUser(w: UnitOfWork, user: string): Promise<void> {
    return objects.removeUser(this.context, w, user);
  }

  /** The user's own objects of one type (and subtype), paged by time (not trashed). */
  listOwn(db: Db, owner: string, type: string, page: PageQuery, defaultCount: number, subtype?: string) {
    return repo.listOwnObjects(db, owner, type, subtype, page, defaultCount);
  }

  // quota (quota.ts)
  checkQuota(db: Db, owner: string, extraBytes: number): Promise<void> {
    return quota.checkQuota(db, this.deps.volumeQuota, owner, extraBytes);
  }

  /**
   * Grows (or with a negative delta frees) the bytes stored with an object: metadata, comments,
   * chat messages. Growth beyond the owner's quota is quota-exceeded before anything changes.
   */
  attachVolume(w: UnitOfWork, object: { uuid: string; owner: string }, delta: number): Promise<void> {
    return quota.attachVolume(w, this.deps.volumeQuota, object, delta);
  }

  /** Objects created in [from, to) (seconds), per type (internal statistics and usage). */
  async countCreated(from: number, to: number): Promise<Record<string, number>> {
    const rows = await repo.countCreatedObjects(this.db, from, to);
    return Object.fromEntries(rows.map((row) => [row.type, Number(row.count)]));
  }

  /** Bytes of storage volume a user's objects take (`feature.used.volume`), as counted. */
  usedVolume(user: string, db: Db = this.db): Promise<number> {
    return quota.usedVolume(db, user);
  }

  /**
   * Recomputes every usage counter from the object rows; lists the ones that differed and,
   * with `fix`, sets them to the sums (the operator's `usage recount`).
   */
  recountUsage(fix: boolean): Promise<quota.UsageDifference[]> {
    return this.write((w) => quota.recountUsage(w, fix));
  }

  /** The user's objects per type, trashed ones included, as counted. */
  objectCounts(user: string, db: Db = this.db): Promise<Record<string, number>> {
    return quota.objectCounts(db, user);
  }

  // tags (tags.ts) and tags on objects (object-tags.ts)
  createUserTags(w: UnitOfWork, user: string): Promise<void> {
    return tags.createUserTags(this.deps.clock, w, user);
  }

  /** The uuids of a user's system and share tags (kept in memory once committed: they never change). */
  readonly userTags: (db: Db, user: string) => Promise<tags.UserTags>;
  readonly getTagForRead = tags.getTagForRead;
  readonly listTags = tags.listTags;
  readonly tagSeenBy = tags.tagSeenBy;

  createTag(w: UnitOfWork, owner: string, input: tags.NewTag): Promise<string> {
    return tags.createTag(this.deps.clock, w, owner, input);
  }

  readonly updateTag = tags.updateTag;
  readonly deleteTag = tags.deleteTag;
  readonly listByTag = objectTags.listByTag;
  readonly tagObject = objectTags.tagObject;
  readonly addOwnerTags = objectTags.addOwnerTags;

  // user links (user-links.ts)
  readonly linkedUsers = userLinks.linkedUsers;

  linkUsers(w: UnitOfWork, a: string, b: string): Promise<void> {
    return userLinks.linkUsers(this.deps.clock, w, a, b);
  }

  readonly unlinkUsers = userLinks.unlinkUsers;
}
