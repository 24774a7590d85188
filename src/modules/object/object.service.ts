/**
 * Comments, links and metadata of objects, user metadata (its routes are the user area's) and
 * the trash (spec "Comments, links, metadata", "Authentication" 7, "Events" comment_*,
 * object_metadata, user_metadata, object_link_*, trash_purge).
 * They apply to objects of every type, so access comes from the object store: read access
 * suffices to comment, links need write on both objects, metadata changes need write.
 */

import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { assertEventSize } from '../../platform/events/event-queue.js';
import { newUuid, nowSeconds, uuidSortKey } from '../../platform/ids.js';
import { Level, type ObjectRow, type ObjectStore } from '../../platform/object-store/index.js';
import * as repo from './object.repository.js';
import {
  COMMENT_LIST_COUNT,
  type CommentObject,
  KEY_PATTERN,
  LINK_MAX,
  type ListCommentsQuery,
  METADATA_VALUE_MAX,
  type MetadataQuery,
  type SetMetadataBody,
  USER_METADATA_MAX,
} from './object.schema.js';

const KEY = new RegExp(KEY_PATTERN);

function objectRef(row: ObjectRow) {
  return { object: row.uuid, type: row.type, owner: row.owner, description: row.description };
}

function toComment(row: repo.CommentTable): CommentObject {
  return { uuid: row.uuid, owner: row.owner, text: row.text, time: row.time, modified: row.modified };
}

/** `keys` and `domain` of a metadata query; wrong-syntax for a malformed key. */
function selection(query: MetadataQuery): repo.MetadataSelection {
  const keys = query.keys === undefined ? undefined : query.keys.split(',').filter((key) => key !== '');
  for (const key of keys ?? []) if (!KEY.test(key)) throw new ApiError('wrong-syntax', `bad keys: ${key}`);
  return {
    ...(keys === undefined ? {} : { keys }),
    ...(query.domain === undefined ? {} : { domain: query.domain }),
  };
}

function parseMetadata(rows: { key: string; value: string }[]): Record<string, unknown> {
  return Object.fromEntries(rows.map((row) => [row.key, JSON.parse(row.value) as unknown]));
}

/** The values as JSON text; too-large beyond 100 KB; a key both updated and deleted is wrong-syntax. */
function checkMetadataBody(body: SetMetadataBody): { update: [string, string][]; remove: string[] } {
  const update = Object.entries(body.update ?? {}).map(([key, value]): [string, string] => {
    const text = JSON.stringify(value);
    if (Buffer.byteLength(text, 'utf8') > METADATA_VALUE_MAX)
      throw new ApiError('too-large', `value of ${key} over 100 KB`);
    return [key, text];
  });
  const remove = [...new Set(body.delete ?? [])];
  const both = remove.find((key) => key in (body.update ?? {}));
  if (both) throw new ApiError('wrong-syntax', `bad delete: ${both} is also updated`);
  return { update, remove };
}

/** Bytes metadata entries take: key and value (JSON text). */
function metadataBytes(entries: Iterable<readonly [string, string]>): number {
  let bytes = 0;
  for (const [key, value] of entries)
    bytes += Buffer.byteLength(key, 'utf8') + Buffer.byteLength(value, 'utf8');
  return bytes;
}

export class ObjectService {
  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
  ) {}

  // ---------------------------------------------------------------- comments

  async listComments(user: string, object: string, query: ListCommentsQuery): Promise<CommentObject[]> {
    const { db } = this.store;
    await this.store.getForRead(db, user, object);
    const rows = await repo.listComments(db, object, query, COMMENT_LIST_COUNT.default);
    return rows.map(toComment);
  }

  /** Read access suffices to comment (spec "Authentication" 7). comment_new to the object's readers. */
  createComment(user: string, object: string, text: string): Promise<string> {
    return this.store.write(async (w) => {
      const { row } = await this.store.getForRead(w.trx, user, object);
      await this.store.attachVolume(w, row, Buffer.byteLength(text, 'utf8'));
      const uuid = newUuid();
      const now = nowSeconds(this.clock);
      await repo.insertComment(w.trx, {
        uuid,
        object,
        owner: user,
        text,
        time: now,
        sort_key: uuidSortKey(uuid),
        modified: now,
      });
      const readers = await this.store.readers(w.trx, row);
      w.emit(readers, 'comment_new', { comment: uuid, owner: user, text, object: objectRef(row) });
      return uuid;
    });
  }

  /** Only the comment's owner edits it (access-denied). */
  updateComment(user: string, uuid: string, text: string): Promise<void> {
    return this.store.write(async (w) => {
      const { comment, object } = await this.findComment(w.trx, user, uuid);
      if (comment.owner !== user) throw new ApiError('access-denied', 'not your comment');
      const delta = Buffer.byteLength(text, 'utf8') - Buffer.byteLength(comment.text, 'utf8');
      await this.store.attachVolume(w, object, delta);
      await repo.updateComment(w.trx, uuid, text, nowSeconds(this.clock));
      const readers = await this.store.readers(w.trx, object);
      w.emit(readers, 'comment_modify', {
        comment: uuid,
        owner: comment.owner,
        text,
        object: objectRef(object),
      });
    });
  }

  /** The comment's owner or the object's owner deletes it (access-denied). */
  deleteComment(user: string, uuid: string): Promise<void> {
    return this.store.write(async (w) => {
      const { comment, object } = await this.findComment(w.trx, user, uuid);
      if (comment.owner !== user && object.owner !== user)
        throw new ApiError('access-denied', 'neither your comment nor your object');
      const readers = await this.store.readers(w.trx, object);
      await repo.deleteComment(w.trx, uuid);
      await this.store.attachVolume(w, object, -Buffer.byteLength(comment.text, 'utf8'));
      w.emit(readers, 'comment_delete', { comment: uuid, owner: comment.owner, object: objectRef(object) });
    });
  }

  /** A comment on an object the user can read; wrong-comment otherwise. */
  private async findComment(db: Db, user: string, uuid: string) {
    const comment = await repo.findComment(db, uuid);
    if (!comment) throw new ApiError('wrong-comment', 'unknown comment');
    const found = await this.store.getForRead(db, user, comment.object).catch(() => undefined);
    if (!found) throw new ApiError('wrong-comment', 'unknown comment');
    const object = found.row;
    return { comment, object };
  }

  // ---------------------------------------------------------------- links

  /** Linked objects the user may read. */
  async listLinks(user: string, object: string): Promise<Record<string, { type: string }>> {
    const { db } = this.store;
    await this.store.getForRead(db, user, object);
    const result: Record<string, { type: string }> = {};
    for (const linked of await repo.listLinked(db, object)) {
      if ((await this.store.accessLevel(db, user, linked.uuid)) >= Level.read)
        result[linked.uuid] = { type: linked.type };
    }
    return result;
  }

  /** Needs write on both objects; object_link_new to users who can read both; at most LINK_MAX links per object. */
  createLink(user: string, object: string, other: string): Promise<void> {
    return this.store.write(async (w) => {
      const first = await this.store.getForRead(w.trx, user, object);
      const second = await this.store.getForRead(w.trx, user, other);
      if (object === other) throw new ApiError('wrong-object', 'an object cannot link to itself');
      if (first.level < Level.write || second.level < Level.write)
        throw new ApiError('access-denied', 'write access to both objects needed');
      if (await repo.findLink(w.trx, object, other)) return;
      for (const end of [object, other])
        if ((await repo.countLinks(w.trx, end)) >= LINK_MAX)
          throw new ApiError('exceeded-limit', `at most ${LINK_MAX} links per object`);
      const [a, b] = repo.ordered(object, other);
      await repo.insertLink(w.trx, {
        object_a: a,
        object_b: b,
        user_uuid: user,
        time: nowSeconds(this.clock),
      });
      await this.emitLink(w, 'object_link_new', user, first.row, second.row);
    });
  }

  /** Needs write on `object`; the other must be readable and the link must exist (wrong-object). */
  deleteLink(user: string, object: string, other: string): Promise<void> {
    return this.store.write(async (w) => {
      const first = await this.store.getForRead(w.trx, user, object);
      const second = await this.store.getForRead(w.trx, user, other);
      if (!(await repo.findLink(w.trx, object, other))) throw new ApiError('wrong-object', 'no such link');
      if (first.level < Level.write) throw new ApiError('access-denied', 'write access needed');
      await this.emitLink(w, 'object_link_delete', user, first.row, second.row);
      await repo.deleteLink(w.trx, object, other);
    });
  }

  /** Users who may read both ends learn of the link: nobody learns of an object they cannot read. */
  private async emitLink(w: UnitOfWork, name: string, user: string, object: ObjectRow, other: ObjectRow) {
    const second = new Set(await this.store.readers(w.trx, other));
    const recipients = (await this.store.readers(w.trx, object)).filter((reader) => second.has(reader));
    w.emit(recipients, name, { object: object.uuid, link: other.uuid, type: other.type, user });
  }

  // ---------------------------------------------------------------- metadata

  async getObjectMetadata(
    user: string,
    object: string,
    query: MetadataQuery,
  ): Promise<Record<string, unknown>> {
    const { db } = this.store;
    const chosen = selection(query);
    await this.store.getForRead(db, user, object);
    return parseMetadata(await repo.listObjectMetadata(db, object, chosen));
  }

  /**
   * Write access needed; object_metadata to the readers unless `noevent`; `nostore` only sends
   * it. too-large, before anything changes, when the event would exceed EVENT_MAX_BYTES.
   */
  setObjectMetadata(
    user: string,
    object: string,
    body: SetMetadataBody,
    options: { noevent: boolean; nostore: boolean },
  ): Promise<void> {
    const { update, remove } = checkMetadataBody(body);
    if (!options.noevent)
      assertEventSize('object_metadata', { object, user, update: body.update ?? {}, delete: remove });
    return this.store.write(async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, object);
      if (!options.nostore) {
        // Only the keys written or deleted change the volume: their old entries go.
        const touched = [...update.map(([key]) => key), ...remove];
        const old =
          touched.length === 0 ? [] : await repo.listObjectMetadata(w.trx, object, { keys: touched });
        const delta = metadataBytes(update) - metadataBytes(old.map((entry) => [entry.key, entry.value]));
        await this.store.attachVolume(w, row, delta);
        await repo.upsertObjectMetadata(
          w.trx,
          update.map(([key, value]) => ({ object, key, value })),
        );
        await repo.deleteObjectMetadata(w.trx, object, remove);
      }
      if (options.noevent || (update.length === 0 && remove.length === 0)) return;
      w.emit(await this.store.readers(w.trx, row), 'object_metadata', {
        object,
        user,
        update: body.update ?? {},
        delete: remove,
      });
    });
  }

  async getUserMetadata(user: string, query: MetadataQuery): Promise<Record<string, unknown>> {
    return parseMetadata(await repo.listUserMetadata(this.store.db, user, selection(query)));
  }

  /** user_metadata to all sessions of the user unless `noevent` (too-large as above); `nostore` only sends it. */
  setUserMetadata(user: string, body: SetMetadataBody, options: { noevent: boolean; nostore: boolean }) {
    const { update, remove } = checkMetadataBody(body);
    if (!options.noevent) assertEventSize('user_metadata', { update: body.update ?? {}, delete: remove });
    return this.store.write(async (w) => {
      if (!options.nostore) {
        await this.checkUserMetadataBound(w.trx, user, update, remove);
        await repo.upsertUserMetadata(
          w.trx,
          update.map(([key, value]) => ({ user_uuid: user, key, value })),
        );
        await repo.deleteUserMetadata(w.trx, user, remove);
      }
      if (options.noevent || (update.length === 0 && remove.length === 0)) return;
      w.emit([user], 'user_metadata', { update: body.update ?? {}, delete: remove });
    });
  }

  /** quota-exceeded when the user's metadata would grow beyond USER_METADATA_MAX bytes. */
  private async checkUserMetadataBound(db: Db, user: string, update: [string, string][], remove: string[]) {
    const entries = new Map(
      (await repo.listUserMetadata(db, user, {})).map((entry) => [entry.key, entry.value] as const),
    );
    const before = metadataBytes(entries);
    for (const key of remove) entries.delete(key);
    for (const [key, value] of update) entries.set(key, value);
    const after = metadataBytes(entries);
    if (after > USER_METADATA_MAX && after > before)
      throw new ApiError('quota-exceeded', 'user metadata over 1 MB');
  }

  // ---------------------------------------------------------------- trash

  /** DELETE /api/trash: everything in the user's trash is purged with its content. */
  emptyTrash(user: string): Promise<void> {
    return this.store.write(async (w) => {
      await this.store.emptyTrash(w, user);
    });
  }
}
