/**
 * Volumes (the /api/volume family, listed in the spec without shapes; spec "Events" file_new,
 * file_modify, file_delete): a volume is an object of type `volume` in the object store (shared,
 * tagged, trashed and evented by the store) that holds a tree of files and folders.
 *
 * Every change belongs to a commit: POST /api/volume/{uuid}/commit applies a list of changes in
 * one transaction (all or nothing), the single-change routes make a one-change commit. Each
 * change emits its event with the commit's UUID to the users who may read the volume; deleting
 * a folder removes its subtree and emits one file_delete for the folder only. Content lives in
 * the database with the entry (so that a commit is one transaction on every node) and counts
 * against the owner's storage volume with the entry's name and a fixed overhead, as does each
 * record of the commit history.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, nowSeconds, uuidSortKey } from '../../platform/ids.js';
import type { ObjectRow, ObjectStore, ObjectTypeDefinition } from '../../platform/object-store/index.js';
import * as repo from './volume.repository.js';
import {
  type Change,
  COMMIT_LIST_COUNT,
  COMMITS_KEPT,
  type CommitBody,
  type CommitView,
  type CreateVolumeBody,
  ENTRY_BYTES,
  FILE_LIST_COUNT,
  type FileView,
  type ListCommitsQuery,
  type ListFilesQuery,
  type ListVolumesQuery,
  MAX_DEPTH,
  MAX_FILES,
  MAX_VOLUMES,
  type MoveBody,
  type UpdateVolumeBody,
  VOLUME_LIST_COUNT,
  type Volume,
} from './volume.schema.js';
import { DEFAULT_MIME } from './volume-upload.js';

/** Length of one ancestor in a path: a UUID and "/". */
const PATH_STEP = 37;

/** A change as the service applies it (content decoded). */
export type VolumeChange =
  | { action: 'folder'; name: string; parent?: string | undefined }
  | {
      action: 'file';
      name: string;
      parent?: string | undefined;
      content: Buffer;
      mime_type?: string | undefined;
    }
  | { action: 'content'; file: string; content: Buffer; mime_type?: string | undefined }
  | { action: 'move'; file: string; name?: string | undefined; parent?: string | undefined }
  | { action: 'delete'; file: string };

export interface CommitResult {
  commit: string;
  file: string[];
}

/** The content of a file for a download. */
export interface FileContent {
  content: Buffer;
  mimeType: string;
}

/** The UUID a sort key was made from (ids.uuidSortKey reversed). */
function uuidOfSortKey(key: string): string {
  return `${key.slice(7, 15)}-${key.slice(3, 7)}-1${key.slice(0, 3)}-${key.slice(15, 19)}-${key.slice(19)}`;
}

function checkName(name: string): void {
  if (name === '.' || name === '..') throw new ApiError('wrong-syntax', 'a name may not be . or ..');
}

function charge(name: string, size: number): number {
  return ENTRY_BYTES + Buffer.byteLength(name, 'utf8') + size;
}

function view(row: repo.FileRow): FileView {
  return {
    type: row.type,
    name: row.name,
    ...(row.parent_uuid === row.volume_uuid ? {} : { parent: row.parent_uuid }),
    ctime: Number(row.ctime),
    mtime: Number(row.mtime),
    ...(row.type === 'file'
      ? { size: Number(row.size), mime_type: row.mime_type ?? DEFAULT_MIME, md5: row.md5 ?? '' }
      : {}),
  };
}

/** One commit in progress: the volume, who commits, the readers its events go to. */
interface CommitContext {
  readonly w: UnitOfWork;
  readonly volume: ObjectRow;
  readonly user: string;
  readonly commit: string;
  readonly readers: string[];
  /** Files and folders the volume holds, kept up to date while the changes apply. */
  files: number;
  /** What each change made or changed, for `#N`. */
  readonly results: string[];
}

export class VolumeService {
  readonly definition: ObjectTypeDefinition;
  /** Files and folders one volume holds at most (tests lower it). */
  maxFiles = MAX_FILES;
  /** Commits kept per volume (tests lower it). */
  commitsKept = COMMITS_KEPT;

  constructor(
    private readonly store: ObjectStore,
    readonly maxUploadSize: number,
    private readonly clock: Clock,
  ) {
    // Files and commits go with the volume row (foreign keys cascade).
    this.definition = store.defineType({ type: 'volume', wrong: 'wrong-volume' });
  }

  // ---- the volume object

  /** quota-exceeded beyond MAX_VOLUMES of the user's (the trash counts until purged). */
  createVolume(user: string, body: CreateVolumeBody): Promise<string> {
    return this.store.write(async (w) => {
      if ((await repo.countVolumes(w.trx, user)) >= MAX_VOLUMES)
        throw new ApiError('quota-exceeded', `at most ${MAX_VOLUMES} volumes`);
      const row = await this.store.createObject(w, {
        type: 'volume',
        owner: user,
        description: body.description ?? '',
      });
      return row.uuid;
    });
  }

  async getVolume(user: string, uuid: string): Promise<Volume> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.definition);
    return (await this.views([row], user))[uuid]!;
  }

  async listVolumes(user: string, query: ListVolumesQuery): Promise<Record<string, Volume>> {
    const rows = await this.store.listOwn(this.store.db, user, 'volume', query, VOLUME_LIST_COUNT.default);
    return this.views(rows, user);
  }

  updateVolume(user: string, uuid: string, body: UpdateVolumeBody): Promise<void> {
    return this.store.write(async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      if (body.description !== row.description)
        await this.store.updateObject(w, row, { description: body.description }, user);
    });
  }

  deleteVolume(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.store.write(async (w) => {
      const found = await this.store.getForRead(w.trx, user, uuid, this.definition);
      await this.store.deleteObject(w, user, found, purge);
    });
  }

  // ---- reading files (read access)

  async listFiles(user: string, volume: string, query: ListFilesQuery): Promise<Record<string, FileView>> {
    await this.store.getForRead(this.store.db, user, volume, this.definition);
    return this.folder(volume, query);
  }

  async getFile(user: string, volume: string, file: string): Promise<FileView> {
    const { db } = this.store;
    await this.store.getForRead(db, user, volume, this.definition);
    const row = await repo.findFile(db, volume, file);
    if (!row) throw new ApiError('wrong-file', 'no such file or folder in the volume');
    return view(row);
  }

  /** A file's content; undefined when there is no such file (HTTP 404). */
  async download(user: string, volume: string, file: string): Promise<FileContent | undefined> {
    const { db } = this.store;
    await this.store.getForRead(db, user, volume, this.definition);
    return this.content(volume, file);
  }

  async listCommits(
    user: string,
    volume: string,
    query: ListCommitsQuery,
  ): Promise<Record<string, CommitView>> {
    const { db } = this.store;
    await this.store.getForRead(db, user, volume, this.definition);
    const rows = await repo.listCommits(db, volume, query, COMMIT_LIST_COUNT.default);
    return Object.fromEntries(
      rows.map((row) => [
        row.uuid,
        {
          time: Number(row.time),
          user: row.user_uuid,
          ...(row.message === '' ? {} : { message: row.message }),
          change: JSON.parse(row.changes) as CommitView['change'],
        },
      ]),
    );
  }

  // ---- reading files for a device (the upgrade grants it; checked by the caller)

  /** A page of the folder (the root without parent); a parent that is no folder of it is wrong-file. */
  async folder(volume: string, query: ListFilesQuery): Promise<Record<string, FileView>> {
    const { parent, ...page } = query;
    const { db } = this.store;
    if (parent !== undefined && parent !== volume) {
      const row = await repo.findFile(db, volume, parent);
      if (row?.type !== 'folder') throw new ApiError('wrong-file', 'the parent is no folder of the volume');
    }
    const rows = await repo.listFolder(db, volume, parent ?? volume, page, FILE_LIST_COUNT.default);
    return Object.fromEntries(rows.map((row) => [row.uuid, view(row)]));
  }

  async content(volume: string, file: string): Promise<FileContent | undefined> {
    const row = await repo.findContent(this.store.db, volume, file);
    if (row?.type !== 'file') return undefined;
    return { content: row.content ?? Buffer.alloc(0), mimeType: row.mime_type ?? DEFAULT_MIME };
  }

  /** Whether the user may read the volume (the upgrade route checks it). */
  async readable(user: string, volume: string): Promise<ObjectRow> {
    return (await this.store.getForRead(this.store.db, user, volume, this.definition)).row;
  }

  // ---- changes (write access)

  /** POST /api/volume/{uuid}/commit: the changes in one transaction, all or nothing. */
  commit(user: string, volume: string, body: CommitBody): Promise<CommitResult> {
    const changes = body.change.map((change) => this.decode(change));
    return this.apply(user, volume, changes, body.message ?? '');
  }

  /** A change of a commit body as the service applies it: missing-element without a field its action needs. */
  private decode(change: Change): VolumeChange {
    const need = <T>(value: T | undefined, field: string): T => {
      if (value === undefined) throw new ApiError('missing-element', `${change.action} needs ${field}`);
      return value;
    };
    const content = () => {
      const bytes = Buffer.from(need(change.content, 'content'), 'base64');
      if (bytes.length > this.maxUploadSize) throw new ApiError('too-large', 'content too large');
      return bytes;
    };
    switch (change.action) {
      case 'folder':
        return { action: 'folder', name: need(change.name, 'name'), parent: change.parent };
      case 'file':
        return {
          action: 'file',
          name: need(change.name, 'name'),
          parent: change.parent,
          content: content(),
          mime_type: change.mime_type,
        };
      case 'content':
        return {
          action: 'content',
          file: need(change.file, 'file'),
          content: content(),
          mime_type: change.mime_type,
        };
      case 'move':
        return { action: 'move', file: need(change.file, 'file'), name: change.name, parent: change.parent };
      case 'delete':
        return { action: 'delete', file: need(change.file, 'file') };
    }
  }

  /** A one-change commit (the single-change routes). */
  async change(
    user: string,
    volume: string,
    change: VolumeChange,
  ): Promise<{ commit: string; file: string }> {
    const result = await this.apply(user, volume, [change], '');
    return { commit: result.commit, file: result.file[0]! };
  }

  move(user: string, volume: string, file: string, body: MoveBody) {
    return this.change(user, volume, { action: 'move', file, name: body.name, parent: body.parent });
  }

  private apply(
    user: string,
    volume: string,
    changes: VolumeChange[],
    message: string,
  ): Promise<CommitResult> {
    return this.store.write(async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, volume, this.definition);
      const commit = newUuid();
      const ctx: CommitContext = {
        w,
        volume: row,
        user,
        commit,
        readers: await this.store.readers(w.trx, row),
        files: await repo.countFiles(w.trx, volume),
        results: [],
      };
      for (const change of changes) ctx.results.push(await this.applyOne(ctx, change));
      const record = JSON.stringify(
        changes.map((change, i) => ({ action: change.action, file: ctx.results[i]! })),
      );
      // The history counts against the storage volume too; the oldest records leave it.
      const charged = ENTRY_BYTES + Buffer.byteLength(message, 'utf8') + Buffer.byteLength(record, 'utf8');
      await this.store.attachVolume(w, row, charged);
      await repo.insertCommit(w.trx, {
        uuid: commit,
        volume_uuid: volume,
        sort_key: uuidSortKey(commit),
        time: nowSeconds(this.clock),
        user_uuid: user,
        message,
        changes: record,
        charged,
      });
      const trimmed = await repo.sumTrimmable(w.trx, volume, this.commitsKept);
      if (trimmed > 0) {
        await repo.trimCommits(w.trx, volume, this.commitsKept);
        await this.store.attachVolume(w, row, -trimmed);
      }
      return { commit, file: ctx.results };
    });
  }

  private applyOne(ctx: CommitContext, change: VolumeChange): Promise<string> {
    switch (change.action) {
      case 'folder':
      case 'file':
        return this.create(ctx, change);
      case 'content':
        return this.replaceContent(ctx, change);
      case 'move':
        return this.moveEntry(ctx, change);
      case 'delete':
        return this.deleteEntry(ctx, change.file);
    }
  }

  /** A UUID, the volume's UUID (the root), or `#N` (what an earlier change of the commit made). */
  private resolve(ctx: CommitContext, ref: string): string {
    if (!ref.startsWith('#')) return ref.toLowerCase();
    const made = ctx.results[Number(ref.slice(1))];
    if (made === undefined) throw new ApiError('wrong-file', `${ref} names no earlier change`);
    return made;
  }

  private async entry(ctx: CommitContext, ref: string): Promise<repo.FileRow> {
    const uuid = this.resolve(ctx, ref);
    const row = await repo.findFile(ctx.w.trx, ctx.volume.uuid, uuid);
    if (!row) throw new ApiError('wrong-file', 'no such file or folder in the volume');
    return row;
  }

  /** The folder new entries go into: its UUID (the volume's at the root) and its children's path. */
  private async folderOf(
    ctx: CommitContext,
    ref: string | undefined,
  ): Promise<{ uuid: string; path: string }> {
    const uuid = ref === undefined ? ctx.volume.uuid : this.resolve(ctx, ref);
    if (uuid === ctx.volume.uuid) return { uuid, path: '/' };
    const row = await repo.findFile(ctx.w.trx, ctx.volume.uuid, uuid);
    if (row?.type !== 'folder') throw new ApiError('wrong-file', 'the parent is no folder of the volume');
    return { uuid, path: `${row.path}${row.uuid}/` };
  }

  private async checkFree(ctx: CommitContext, parent: string, name: string): Promise<void> {
    checkName(name);
    if (await repo.nameTaken(ctx.w.trx, ctx.volume.uuid, parent, name))
      throw new ApiError('already-exist', `${name} exists in the folder`);
  }

  private base(ctx: CommitContext, row: repo.FileRow) {
    return { commit: ctx.commit, file: row.uuid, volume: ctx.volume.uuid, type: row.type };
  }

  private async create(
    ctx: CommitContext,
    change: Extract<VolumeChange, { action: 'folder' | 'file' }>,
  ): Promise<string> {
    const { w, volume } = ctx;
    const parent = await this.folderOf(ctx, change.parent);
    if ((parent.path.length - 1) / PATH_STEP >= MAX_DEPTH)
      throw new ApiError('exceeded-limit', `folders nest at most ${MAX_DEPTH} deep`);
    await this.checkFree(ctx, parent.uuid, change.name);
    if (ctx.files >= this.maxFiles)
      throw new ApiError('exceeded-limit', `a volume holds at most ${this.maxFiles} entries`);
    const content = change.action === 'file' ? change.content : undefined;
    const size = content?.length ?? 0;
    const charged = charge(change.name, size);
    await this.store.attachVolume(w, volume, charged);
    const uuid = newUuid();
    const now = nowSeconds(this.clock);
    const row: repo.VolumeFileTable = {
      uuid,
      volume_uuid: volume.uuid,
      parent_uuid: parent.uuid,
      path: parent.path,
      sort_key: uuidSortKey(uuid),
      created: now,
      type: change.action,
      name: change.name,
      ctime: now,
      mtime: now,
      size,
      mime_type: content
        ? ((change as { mime_type?: string }).mime_type?.toLowerCase() ?? DEFAULT_MIME)
        : null,
      md5: content ? createHash('md5').update(content).digest('hex') : null,
      charged,
      content: content ?? null,
    };
    await repo.insertFile(w.trx, row);
    ctx.files += 1;
    w.emit(ctx.readers, 'file_new', {
      ...this.base(ctx, row),
      name: row.name,
      ...(parent.uuid === volume.uuid ? {} : { parent: parent.uuid }),
      ctime: now,
      mtime: now,
      user: ctx.user,
    });
    // The content is the new file's first change: size, mime_type and md5 as file_modify.
    if (content) {
      w.emit(ctx.readers, 'file_modify', {
        ...this.base(ctx, row),
        user: ctx.user,
        size,
        mime_type: row.mime_type,
        md5: row.md5,
      });
    }
    return uuid;
  }

  private async replaceContent(
    ctx: CommitContext,
    change: Extract<VolumeChange, { action: 'content' }>,
  ): Promise<string> {
    const { w } = ctx;
    const row = await this.entry(ctx, change.file);
    if (row.type !== 'file') throw new ApiError('wrong-file', 'a folder has no content');
    const charged = charge(row.name, change.content.length);
    await this.store.attachVolume(w, ctx.volume, charged - Number(row.charged));
    const now = nowSeconds(this.clock);
    const mime = change.mime_type?.toLowerCase() ?? row.mime_type ?? DEFAULT_MIME;
    const md5 = createHash('md5').update(change.content).digest('hex');
    await repo.updateFile(w.trx, row.uuid, {
      content: change.content,
      size: change.content.length,
      mime_type: mime,
      md5,
      charged,
      ctime: now,
      mtime: now,
    });
    w.emit(ctx.readers, 'file_modify', {
      ...this.base(ctx, row),
      ...(Number(row.ctime) === now ? {} : { ctime: now }),
      ...(Number(row.mtime) === now ? {} : { mtime: now }),
      user: ctx.user,
      size: change.content.length,
      mime_type: mime,
      md5,
    });
    return row.uuid;
  }

  private async moveEntry(
    ctx: CommitContext,
    change: Extract<VolumeChange, { action: 'move' }>,
  ): Promise<string> {
    const { w, volume } = ctx;
    const row = await this.entry(ctx, change.file);
    const name = change.name ?? row.name;
    const target =
      change.parent === undefined
        ? { uuid: row.parent_uuid, path: row.path }
        : await this.folderOf(ctx, change.parent);
    const moved = target.uuid !== row.parent_uuid;
    const renamed = name !== row.name;
    if (!moved && !renamed) return row.uuid;
    const own = `${row.path}${row.uuid}/`;
    if (row.type === 'folder' && (target.uuid === row.uuid || target.path.startsWith(own)))
      throw new ApiError('illegal-state', 'a folder cannot move into itself');
    await this.checkFree(ctx, target.uuid, name);
    if (moved && row.type === 'folder') {
      // The deepest entry of the subtree after the move (the folder itself when it is empty).
      const below = await repo.subtreeStats(w.trx, volume.uuid, own);
      const deepest =
        below.count > 0 ? below.longest - row.path.length + target.path.length : target.path.length;
      if ((deepest - 1) / PATH_STEP >= MAX_DEPTH)
        throw new ApiError('exceeded-limit', `folders nest at most ${MAX_DEPTH} deep`);
    } else if (moved && (target.path.length - 1) / PATH_STEP >= MAX_DEPTH) {
      throw new ApiError('exceeded-limit', `folders nest at most ${MAX_DEPTH} deep`);
    }
    const charged = charge(name, Number(row.size));
    await this.store.attachVolume(w, volume, charged - Number(row.charged));
    const now = nowSeconds(this.clock);
    await repo.updateFile(w.trx, row.uuid, {
      name,
      parent_uuid: target.uuid,
      path: target.path,
      charged,
      ctime: now,
    });
    if (moved && row.type === 'folder')
      await repo.movePaths(w.trx, volume.uuid, own, `${target.path}${row.uuid}/`);
    w.emit(ctx.readers, 'file_modify', {
      ...this.base(ctx, row),
      ...(renamed ? { name } : {}),
      // Moved to the root: the volume's UUID.
      ...(moved ? { parent: target.uuid } : {}),
      ...(Number(row.ctime) === now ? {} : { ctime: now }),
      user: ctx.user,
    });
    return row.uuid;
  }

  /** Deletes a file, a folder with its subtree, or with the volume's UUID everything at the root. */
  private async deleteEntry(ctx: CommitContext, ref: string): Promise<string> {
    const { w, volume } = ctx;
    const uuid = this.resolve(ctx, ref);
    let freed: number;
    if (uuid === volume.uuid) {
      const all = await repo.subtreeStats(w.trx, volume.uuid, '/');
      await repo.deleteBelow(w.trx, volume.uuid, '/');
      ctx.files -= all.count;
      freed = all.charged;
    } else {
      const row = await this.entry(ctx, uuid);
      freed = Number(row.charged);
      if (row.type === 'folder') {
        const prefix = `${row.path}${row.uuid}/`;
        const below = await repo.subtreeStats(w.trx, volume.uuid, prefix);
        await repo.deleteBelow(w.trx, volume.uuid, prefix);
        ctx.files -= below.count;
        freed += below.charged;
      }
      await repo.deleteFile(w.trx, row.uuid);
      ctx.files -= 1;
    }
    await this.store.attachVolume(w, volume, -freed);
    // One event for the whole subtree (spec: no per-element file_delete events).
    w.emit(ctx.readers, 'file_delete', { commit: ctx.commit, file: uuid, volume: volume.uuid });
    return uuid;
  }

  private async views(rows: ObjectRow[], user: string): Promise<Record<string, Volume>> {
    const { db } = this.store;
    const uuids = rows.map((row) => row.uuid);
    const tags = await this.store.visibleTags(db, uuids, [user]);
    const stats = new Map((await repo.volumeStats(db, uuids)).map((s) => [s.volume_uuid, s]));
    const heads = new Map((await repo.headCommits(db, uuids)).map((h) => [h.volume_uuid, h.head]));
    return Object.fromEntries(
      rows.map((row) => {
        const stat = stats.get(row.uuid);
        const head = heads.get(row.uuid);
        return [
          row.uuid,
          {
            owner: row.owner,
            time: row.time,
            description: row.description,
            files: Number(stat?.count ?? 0),
            size: Number(stat?.size ?? 0),
            ...(head ? { commit: uuidOfSortKey(head) } : {}),
            tag: tags(user, row.uuid),
          },
        ];
      }),
    );
  }
}
