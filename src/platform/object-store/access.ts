/**
 * Access to objects (decisions.md "Objects and tags"; spec Conventions 14): a user's level on an
 * object, derived from its tags by grants.ts, and the reads that check it.
 */
import type { Db } from '../database/database.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import { ApiError, type ApiStatus } from '../errors.js';
import { derive, effectiveLevels, Level, type TagOnObject } from './grants.js';
import * as repo from './object-store.repository.js';

/** What an object type declares to live in the store. */
export interface ObjectTypeDefinition {
  /** The type name used in events, tag listings and `type` filters. */
  readonly type: string;
  /** Status for an object of this type that the user cannot read (Conventions 14). */
  readonly wrong: ApiStatus;
  /**
   * Removes what the type keeps outside the object row; runs in the purging unit of work, where
   * work that must wait for the commit (removing files) goes to `w.afterCommit`.
   */
  readonly onPurge?: (w: UnitOfWork, object: repo.ObjectRow) => Promise<void>;
}

/** The generic type for calls on any object (`/api/object/...`). */
export const ANY_OBJECT: ObjectTypeDefinition = { type: '', wrong: 'wrong-object' };

/** An object the caller may access, with the caller's level on it. */
export interface AccessedObject {
  readonly row: repo.ObjectRow;
  readonly level: number;
}

/** A tag's policy: user -> level and grant. */
export type TagPolicy = Map<string, { level: number; grant: number }>;

/** The policies of the given tags. */
export async function policiesOf(db: Db, tags: readonly string[]): Promise<Map<string, TagPolicy>> {
  const result = new Map<string, TagPolicy>();
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

/** The object's tags with their policies, as grants.ts derives access from them. */
export async function tagsOnObject(db: Db, object: string): Promise<TagOnObject[]> {
  const tags = new Map<string, TagOnObject & { policy: TagPolicy }>();
  for (const row of await repo.listObjectGrants(db, object)) {
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

/** The users among `levels` who may read. */
export function readersOf(levels: Map<string, number>): string[] {
  return [...levels].filter(([, level]) => level >= Level.read).map(([user]) => user);
}

/** Every user with access to the object and their level. */
export async function levelsOf(db: Db, row: repo.ObjectRow): Promise<Map<string, number>> {
  return (await accessOf(db, row)).levels;
}

/** Every user's level on the object, and the tags on it that it derives from (one statement). */
export async function accessOf(
  db: Db,
  row: repo.ObjectRow,
): Promise<{ levels: Map<string, number>; tags: TagOnObject[] }> {
  const tags = await tagsOnObject(db, row.uuid);
  return { levels: effectiveLevels(derive(row.owner, tags), row.owner, row.trashed === 1), tags };
}

/** Users who may read the object. */
export async function readers(db: Db, row: repo.ObjectRow): Promise<string[]> {
  return readersOf(await levelsOf(db, row));
}

async function findWithLevel(db: Db, user: string, uuid: string): Promise<AccessedObject | undefined> {
  const row = await repo.findObjectWithGrant(db, uuid, user);
  if (!row) return undefined;
  const { grant_level: grant, ...object } = row;
  return { row: object, level: levelOf(object, user, grant) };
}

/** The user's level on an object from the highest grant of its tags (owners own; the trash hides). */
function levelOf(object: repo.ObjectRow, user: string, grant: number | null): number {
  return object.owner === user ? Level.owner : object.trashed === 1 ? 0 : Number(grant ?? 0);
}

/** The caller's level on an object (0 when none, or when it does not exist). */
export async function accessLevel(db: Db, user: string, uuid: string): Promise<number> {
  const found = await findWithLevel(db, user, uuid);
  return found?.level ?? 0;
}

/** The object if the user may read it; otherwise the type's wrong-... status (Conventions 14). */
export async function getForRead(
  db: Db,
  user: string,
  uuid: string,
  definition: ObjectTypeDefinition = ANY_OBJECT,
): Promise<AccessedObject> {
  const found = await findWithLevel(db, user, uuid);
  if (!found || found.level < Level.read || (definition.type !== '' && found.row.type !== definition.type)) {
    throw new ApiError(definition.wrong, 'unknown object');
  }
  return found;
}

/**
 * The object row of a findObjectForViewer row, written out: a rest pattern (`...object`) copies
 * through V8's slow generic path, about 1 µs per GET (docs/benchmarks.md "The object path:
 * reads, second round"). The union's columns are exactly these.
 */
function objectOf(row: repo.ObjectRow): repo.ObjectRow {
  return {
    uuid: row.uuid,
    type: row.type,
    owner: row.owner,
    time: row.time,
    sort_key: row.sort_key,
    modified: row.modified,
    description: row.description,
    status: row.status,
    subtype: row.subtype,
    data: row.data,
    volume: row.volume,
    attached_volume: row.attached_volume,
    trashed: row.trashed,
  };
}

/**
 * getForRead with the tags on the object the user may read, in one statement: a GET of one
 * object is one round trip on PostgreSQL instead of two (docs/benchmarks.md "The object path,
 * profiled").
 */
export async function getForReadWithTags(
  db: Db,
  user: string,
  uuid: string,
  definition: ObjectTypeDefinition = ANY_OBJECT,
): Promise<AccessedObject & { tags: string[] }> {
  let found: AccessedObject | undefined;
  const tags: string[] = [];
  for (const row of await repo.findObjectForViewer(db, uuid, user)) {
    if (row.visible_tag !== null) {
      tags.push(row.visible_tag);
      continue;
    }
    const object = objectOf(row);
    found = { row: object, level: levelOf(object, user, row.grant_level) };
  }
  if (!found || found.level < Level.read || (definition.type !== '' && found.row.type !== definition.type)) {
    throw new ApiError(definition.wrong, 'unknown object');
  }
  return { ...found, tags: tags.sort() };
}

/** The object if the user may change it: wrong-... when unreadable, access-denied when read-only. */
export async function getForWrite(
  db: Db,
  user: string,
  uuid: string,
  definition: ObjectTypeDefinition = ANY_OBJECT,
): Promise<AccessedObject> {
  const found = await getForRead(db, user, uuid, definition);
  if (found.level < Level.write) throw new ApiError('access-denied', 'write access needed');
  return found;
}
