/**
 * Tags (decisions.md "Objects and tags"; spec "Events" tag_new, tag_modify, tag_delete,
 * object_tag): the /api/tag family and tagging objects. The
 * access model itself lives in the object-store core; this service applies the rules of who
 * may do what with a tag.
 */
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { Level, type ObjectStore, type TagView, type UserTags } from '../../platform/object-store/index.js';
import type { CreateTagBody, ObjectTagBody, TagObjectsQuery, UpdateTagBody } from './tag.schema.js';
import { TAG_LIST_COUNT } from './tag.schema.js';

export class TagService {
  constructor(private readonly store: ObjectStore) {}

  /** A user's system and share tags (the tag fields of GET /api/user). */
  getUserTags(userUuid: string, db: Db = this.store.db): Promise<UserTags> {
    return this.store.userTags(db, userUuid);
  }

  /** Creates what every user owns from the start: system tags and share tags. */
  createUserTags(w: UnitOfWork, userUuid: string): Promise<void> {
    return this.store.createUserTags(w, userUuid);
  }

  async listTags(user: string): Promise<Record<string, TagView>> {
    const tags = await this.store.listTags(this.store.db, user);
    return Object.fromEntries([...tags].map(([uuid, view]) => [uuid, this.store.tagSeenBy(view, user)]));
  }

  async getTag(user: string, uuid: string): Promise<TagView> {
    return this.store.tagSeenBy((await this.store.getTagForRead(this.store.db, user, uuid)).view, user);
  }

  createTag(user: string, body: CreateTagBody): Promise<string> {
    return this.store.write(async (w) => {
      const policy = await this.checkPolicy(w.trx, user, body.policy ?? {});
      return this.store.createTag(w, user, {
        label: body.label,
        policy,
        foreignUse: body.foreign_use === true,
      });
    });
  }

  /** Relabels a custom tag, changes its policy or foreign use: its owner only. */
  updateTag(user: string, uuid: string, body: UpdateTagBody): Promise<void> {
    return this.store.write(async (w) => {
      const { row } = await this.ownCustomTag(w.trx, user, uuid);
      const policy = body.policy === undefined ? undefined : await this.checkPolicy(w.trx, user, body.policy);
      if (body.label === undefined && policy === undefined && body.foreign_use === undefined) return;
      await this.store.updateTag(w, user, row, {
        ...(body.label === undefined ? {} : { label: body.label }),
        ...(policy === undefined ? {} : { policy }),
        ...(body.foreign_use === undefined ? {} : { foreignUse: body.foreign_use }),
      });
    });
  }

  deleteTag(user: string, uuid: string): Promise<void> {
    return this.store.write(async (w) => {
      const { row } = await this.ownCustomTag(w.trx, user, uuid);
      await this.store.deleteTag(w, user, row);
    });
  }

  listObjects(user: string, uuid: string, query: TagObjectsQuery) {
    const { type, ...page } = query;
    return this.store.listByTag(this.store.db, user, uuid, page, type, TAG_LIST_COUNT.default);
  }

  /** POST /api/object/{uuid}/tag: read access to the object is needed to tag it at all. */
  tagObject(user: string, objectUuid: string, body: ObjectTagBody): Promise<string[]> {
    return this.store.write(async (w) => {
      const found = await this.store.getForRead(w.trx, user, objectUuid);
      return this.store.tagObject(w, user, found, body.add ?? [], body.delete ?? []);
    });
  }

  /** A tag the user may read; access-denied unless it is their own custom tag. */
  private async ownCustomTag(db: Db, user: string, uuid: string) {
    const found = await this.store.getTagForRead(db, user, uuid);
    if (found.row.owner !== user) throw new ApiError('access-denied', 'only the owner changes a tag');
    if (found.row.kind !== 'custom') throw new ApiError('access-denied', `${found.row.kind} tags are fixed`);
    return found;
  }

  /** Users in a policy must be linked with the owner (wrong-user); the owner's level is fixed. */
  private async checkPolicy(db: Db, owner: string, policy: Record<string, number>) {
    const users = Object.keys(policy);
    if (users.includes(owner)) throw new ApiError('wrong-syntax', "bad policy: the owner's level is fixed");
    const granted = users.filter((user) => (policy[user] ?? 0) > Level.none);
    const linked = new Set((await this.store.linkedUsers(db, owner, granted)).map((link) => link.other_uuid));
    const stranger = granted.find((user) => !linked.has(user));
    if (stranger) throw new ApiError('wrong-user', `user ${stranger} is not linked`);
    return policy;
  }
}
