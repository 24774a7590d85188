/**
 * How access to one object derives from its tags (decisions.md "Objects and tags").
 *
 * A user's access is the highest level any of the object's tags grants them; the owner always
 * has 4. A tag put on an object by someone other than the object's owner stays only while
 * that user may keep it there: they can use the tag (its owner, or a writer of a tag open to
 * foreign use), they can still read the object, and, when the tag grants access to anyone but
 * the object's owner, they still hold propagate. Access is derived from the owner outwards, so
 * when a user loses access, every tag they put on the object (and everything shared further
 * through those tags) goes with it, also when users share an object back and forth.
 */

/** Access levels of a tag policy and of users on objects. */
export const Level = { none: 0, read: 1, write: 2, propagate: 3, owner: 4 } as const;

/** Names of the system tags every user owns. */
export const SYSTEM_TAGS = [
  'tag_all',
  'tag_unread',
  'tag_inbox',
  'tag_outbox',
  'tag_trash',
  'tag_shared',
] as const;
export type SystemTagName = (typeof SYSTEM_TAGS)[number];

/** Names of the personal share tags and the level each gives linked users. */
export const SHARE_TAGS = { share_read: 1, share_write: 2, share_propagate: 3 } as const;
export type ShareTagName = keyof typeof SHARE_TAGS;

/** The access a tag's policy row gives its user on the objects carrying the tag. */
export function grantOf(user: string, tagOwner: string, level: number, foreignUse: boolean): number {
  if (user === tagOwner) return foreignUse ? Level.propagate : Level.none;
  return Math.min(level, Level.propagate);
}

export interface TagOnObject {
  readonly tag: string;
  /** Who put the tag on the object. */
  readonly attacher: string;
  readonly tagOwner: string;
  readonly name: string | null;
  readonly foreignUse: boolean;
  /** Policy of the tag: user -> level on the tag and grant on its objects. */
  readonly policy: ReadonlyMap<string, { level: number; grant: number }>;
}

/** Whether a user may put the tag on objects or take it off (besides the object's owner). */
export function mayUseTag(
  tag: Pick<TagOnObject, 'tagOwner' | 'foreignUse' | 'policy'>,
  user: string,
): boolean {
  if (user === tag.tagOwner) return true;
  return tag.foreignUse && (tag.policy.get(user)?.level ?? 0) >= Level.write;
}

/** True when the tag gives access to someone other than the object's owner. */
export function grantsOthers(tag: Pick<TagOnObject, 'policy'>, objectOwner: string): boolean {
  for (const [user, entry] of tag.policy) if (entry.grant > 0 && user !== objectOwner) return true;
  return false;
}

/** The level the user needs on an object to keep (or put) the tag there. */
export function levelNeeded(tag: Pick<TagOnObject, 'policy'>, objectOwner: string): number {
  return grantsOthers(tag, objectOwner) ? Level.propagate : Level.read;
}

export interface Derivation {
  /** Every user with access, and their level; the owner has 4. */
  readonly levels: Map<string, number>;
  /** Tags whose user lost the right to keep them on the object. */
  readonly dropped: string[];
}

/** Derives access from the owner outwards; tags that cannot be derived are dropped. */
export function derive(objectOwner: string, tags: readonly TagOnObject[]): Derivation {
  const levels = new Map<string, number>([[objectOwner, Level.owner]]);
  const dropped: string[] = [];
  let pending: TagOnObject[] = [];
  for (const tag of tags) {
    // tag_all and tag_trash mark their owner's own objects; they grant nothing.
    if (tag.name === 'tag_all' || tag.name === 'tag_trash') {
      if (tag.tagOwner !== objectOwner) dropped.push(tag.tag);
    } else {
      pending.push(tag);
    }
  }
  let progress = true;
  while (progress && pending.length > 0) {
    progress = false;
    const rest: TagOnObject[] = [];
    for (const tag of pending) {
      const have = levels.get(tag.attacher) ?? 0;
      if (mayUseTag(tag, tag.attacher) && have >= levelNeeded(tag, objectOwner)) {
        for (const [user, entry] of tag.policy) {
          if (entry.grant > (levels.get(user) ?? 0)) levels.set(user, entry.grant);
        }
        progress = true;
      } else {
        rest.push(tag);
      }
    }
    pending = rest;
  }
  for (const tag of pending) dropped.push(tag.tag);
  return { levels, dropped };
}

/** What users can do while the object is in the trash: only its owner sees it. */
export function effectiveLevels(
  derivation: Derivation,
  objectOwner: string,
  trashed: boolean,
): Map<string, number> {
  if (!trashed) return derivation.levels;
  return new Map([[objectOwner, Level.owner]]);
}
