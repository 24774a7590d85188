/**
 * Links between users (decisions.md "Sharing"; spec "Invitations"): linked users appear in each
 * other's share tags, so what one tags with a share tag is shared with the other.
 */
import type { Clock } from '../clock.js';
import type { Db } from '../database/database.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import { nowSeconds } from '../ids.js';
import { SHARE_TAGS, type ShareTagName } from './grants.js';
import * as repo from './object-store.repository.js';
import { updateTag } from './tags.js';

/** The users linked with `user` (all, or those among `others`). */
export function linkedUsers(db: Db, user: string, others?: readonly string[]) {
  return repo.listUserLinks(db, user, others);
}

/** `other` joins each of `owner`'s share tags at the tag's level; what it had tagged becomes shared. */
async function linkShareTags(w: UnitOfWork, owner: string, other: string): Promise<void> {
  const tags = await repo.findNamedTags(w.trx, [owner], Object.keys(SHARE_TAGS));
  for (const tag of tags) {
    await updateTag(w, undefined, tag, { policy: { [other]: SHARE_TAGS[tag.name as ShareTagName] } });
  }
}

/** `other` leaves every policy of `owner`'s tags and loses what it gave. */
async function unlinkTags(w: UnitOfWork, owner: string, other: string): Promise<void> {
  for (const tag of await repo.listTagsNaming(w.trx, owner, other)) {
    await updateTag(w, undefined, tag, { policy: { [other]: 0 } });
  }
}

/** Links two users: each joins the other's share tags. */
export async function linkUsers(clock: Clock, w: UnitOfWork, a: string, b: string): Promise<void> {
  await repo.insertUserLink(w.trx, a, b, nowSeconds(clock));
  await linkShareTags(w, a, b);
  await linkShareTags(w, b, a);
}

/** Unlinks two users: each leaves every policy of the other's tags, with what derived from it. */
export async function unlinkUsers(w: UnitOfWork, a: string, b: string): Promise<void> {
  await repo.deleteUserLink(w.trx, a, b);
  await unlinkTags(w, a, b);
  await unlinkTags(w, b, a);
}
