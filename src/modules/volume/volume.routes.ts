/**
 * Routes of the /api/volume family (listed in the spec without shapes; events file_new,
 * file_modify, file_delete), the upgrade of a box from a volume (spec Device API, Tasks:
 * upgrade) and the device's read-only file routes for it.
 */
import type { FastifyReply } from 'fastify';
import { sessionOf, userOf } from '../../platform/access.js';
import { readUploadBody } from '../../platform/body.js';
import { ApiError, NotFoundError } from '../../platform/errors.js';
import { Empty, isSet, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  ChangeAnswer,
  COMMITS_KEPT,
  CommitAnswer,
  CommitBody,
  CreateVolumeBody,
  DeleteQuery,
  DownloadQuery,
  ENTRY_BYTES,
  FileDownloadParams,
  FileParams,
  FolderBody,
  GetFileAnswer,
  GetVolumeAnswer,
  ListCommitsAnswer,
  ListCommitsQuery,
  ListFilesAnswer,
  ListFilesQuery,
  ListVolumesAnswer,
  ListVolumesQuery,
  MAX_CHANGES,
  MAX_DEPTH,
  MAX_FILES,
  MAX_VOLUMES,
  MoveBody,
  ObjectParams,
  UpdateVolumeBody,
  UpgradeBody,
  UpgradeParams,
  UploadParams,
  UploadQuery,
} from './volume.schema.js';
import type { FileContent, VolumeService } from './volume.service.js';
import { UPGRADE_TIMEOUT, type VolumeUpgradeService } from './volume-upgrade.service.js';
import { mimeOf } from './volume-upload.js';

const tags = ['volume'];

const EVENTS =
  'Every change belongs to a commit and emits, to the users who may read the volume: file_new ' +
  '{commit, file, volume, type, name, parent (not at the root), ctime, mtime, user}; file_modify ' +
  '{commit, file, volume, type, name (if renamed), parent (if moved; the volume UUID for the root), ' +
  'ctime and mtime (if changed), user, size, mime_type and md5 (with new content)}; file_delete ' +
  '{commit, file, volume}. A new file with content emits file_new, then file_modify with its size, ' +
  'mime_type and md5.';

const BOUNDS =
  `Bounds: at most ${MAX_FILES} files and folders per volume and folders ${MAX_DEPTH} deep ` +
  '(exceeded-limit); names 1..255 characters without /, \\ and control characters, not . or .. ' +
  '(wrong-syntax), unique within their folder (already-exist). Content, names and ' +
  `${ENTRY_BYTES} bytes per entry count against the owner's storage volume (feature.quota.volume; ` +
  'quota-exceeded).';

const CHANGE_STATUSES =
  'Statuses wrong-volume (unknown or unreadable), access-denied (read-only), wrong-file (an unknown ' +
  'file or folder of the volume, a parent that is no folder), already-exist, exceeded-limit, ' +
  'quota-exceeded, too-large. A failed change changes nothing.';

function sendFile(reply: FastifyReply, file: FileContent | undefined, inline: boolean): FastifyReply {
  if (!file) throw new NotFoundError();
  return reply
    .header('content-type', file.mimeType)
    .header('content-disposition', inline ? 'inline' : 'attachment')
    .send(file.content);
}

export function volumeRoutes(app: AppInstance, volumes: VolumeService, upgrades: VolumeUpgradeService): void {
  app.post(
    '/api/volume',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Make a volume: an object holding files and folders (object_new)',
        description:
          'A volume is an object of type volume: shared, tagged, trashed and purged like any object ' +
          '(purging removes its files and commits). Files are changed through commits. ' +
          `At most ${MAX_VOLUMES} volumes per user, those in the trash included (quota-exceeded). ` +
          `${BOUNDS}`,
        tags,
        body: CreateVolumeBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await volumes.createVolume(userOf(request), request.body) }),
  );

  app.get(
    '/api/volume',
    {
      config: { access: 'user' },
      schema: {
        summary: "The user's own volumes, paged (Conventions 8)",
        description:
          'Volumes others share are listed through their tags (GET /api/tag/{uuid}/object?type=volume).',
        tags,
        querystring: ListVolumesQuery,
        response: { 200: ListVolumesAnswer },
      },
    },
    async (request) => ({ volume: await volumes.listVolumes(userOf(request), request.query) }),
  );

  app.get(
    '/api/volume/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One volume: its files count, content bytes and newest commit',
        description: 'Status wrong-volume.',
        tags,
        params: ObjectParams,
        response: { 200: GetVolumeAnswer },
      },
    },
    async (request) => ({ volume: await volumes.getVolume(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/volume/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change the description (object_modify)',
        description: 'Statuses wrong-volume, access-denied.',
        tags,
        params: ObjectParams,
        body: UpdateVolumeBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await volumes.updateVolume(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/volume/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Move to the trash, or delete with purge (object_delete)',
        description:
          'In the trash the volume keeps its files (users it was shared with lose access); purge ' +
          'removes its files and commits. Statuses wrong-volume, access-denied.',
        tags,
        params: ObjectParams,
        querystring: DeleteQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await volumes.deleteVolume(userOf(request), request.params.uuid, isSet(request.query.purge));
      return {};
    },
  );

  // ---- files and folders

  app.get(
    '/api/volume/:uuid/file',
    {
      config: { access: 'user' },
      schema: {
        summary: "A folder's entries (the root without parent), paged (Conventions 8)",
        description:
          'Entries in order of creation; `start` is an entry UUID; parent may be the volume UUID (the ' +
          'root). Statuses wrong-volume, wrong-file (a parent that is no folder of the volume).',
        tags,
        params: ObjectParams,
        querystring: ListFilesQuery,
        response: { 200: ListFilesAnswer },
      },
    },
    async (request) => ({
      file: await volumes.listFiles(userOf(request), request.params.uuid, request.query),
    }),
  );

  app.get(
    '/api/volume/:uuid/file/:file',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One file or folder',
        description: 'Statuses wrong-volume, wrong-file.',
        tags,
        params: FileParams,
        response: { 200: GetFileAnswer },
      },
    },
    async (request) => ({
      file: await volumes.getFile(userOf(request), request.params.uuid, request.params.file),
    }),
  );

  app.get(
    '/api/volume/:uuid/file/:file/:name',
    {
      config: { access: 'user', binary: true, didParam: 'uuid' },
      schema: {
        summary: "A file's content, or HTTP 404",
        description:
          'Content-Type is the mime_type stored with the file. Accepts did/dkey authentication (object ' +
          'UUID = volume UUID); `inline` optional.',
        tags,
        params: FileDownloadParams,
        querystring: DownloadQuery,
      },
    },
    async (request, reply) => {
      const { uuid, file } = request.params;
      return sendFile(
        reply,
        await volumes.download(userOf(request), uuid, file),
        isSet(request.query.inline),
      );
    },
  );

  app.post(
    '/api/volume/:uuid/upload/:name',
    {
      config: { access: 'user', upload: true },
      schema: {
        summary: 'Upload a new file (raw body) in a one-change commit',
        description:
          'Query `name` (the file name) and `parent` (a folder UUID; the root without). The body is the ' +
          "content (may be empty), at most MAX_UPLOAD_SIZE bytes (too-large); the request's " +
          'Content-Type is kept as mime_type (application/octet-stream when absent). Answers the ' +
          `commit and the file UUID. ${EVENTS} ${CHANGE_STATUSES}`,
        tags,
        params: UploadParams,
        querystring: UploadQuery,
        response: { 200: ChangeAnswer },
      },
    },
    async (request) => {
      const content = await readUploadBody(
        request.body,
        volumes.maxUploadSize,
        request.headers['content-length'],
      );
      return volumes.change(userOf(request), request.params.uuid, {
        action: 'file',
        name: request.query.name,
        parent: request.query.parent,
        content,
        mime_type: mimeOf(request.headers['content-type']),
      });
    },
  );

  app.post(
    '/api/volume/:uuid/file/:file/:name',
    {
      config: { access: 'user', upload: true },
      schema: {
        summary: "Replace a file's content (raw body) in a one-change commit (file_modify)",
        description: `The request's Content-Type becomes the mime_type. A folder is wrong-file. ${CHANGE_STATUSES}`,
        tags,
        params: FileDownloadParams,
        response: { 200: ChangeAnswer },
      },
    },
    async (request) => {
      const content = await readUploadBody(
        request.body,
        volumes.maxUploadSize,
        request.headers['content-length'],
      );
      return volumes.change(userOf(request), request.params.uuid, {
        action: 'content',
        file: request.params.file,
        content,
        mime_type: mimeOf(request.headers['content-type']),
      });
    },
  );

  app.post(
    '/api/volume/:uuid/folder',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Make a folder in a one-change commit (file_new)',
        description: `parent: a folder UUID; the root without. ${CHANGE_STATUSES}`,
        tags,
        params: ObjectParams,
        body: FolderBody,
        response: { 200: ChangeAnswer },
      },
    },
    async (request) =>
      volumes.change(userOf(request), request.params.uuid, {
        action: 'folder',
        name: request.body.name,
        parent: request.body.parent,
      }),
  );

  app.post(
    '/api/volume/:uuid/file/:file',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Rename and/or move a file or folder in a one-change commit (file_modify)',
        description:
          'parent: the folder to move into (the volume UUID for the root). A folder moves with its ' +
          'subtree (one file_modify); into itself or its own subtree is illegal-state. Nothing to ' +
          `change: an empty commit, no event. ${CHANGE_STATUSES}`,
        tags,
        params: FileParams,
        body: MoveBody,
        response: { 200: ChangeAnswer },
      },
    },
    async (request) => volumes.move(userOf(request), request.params.uuid, request.params.file, request.body),
  );

  app.delete(
    '/api/volume/:uuid/file/:file',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Delete a file, or a folder with everything in it, in a one-change commit (file_delete)',
        description:
          'One file_delete for the file or folder named, none for what a folder held (spec: no ' +
          'per-element events). The volume UUID as file deletes everything at the root: file_delete ' +
          `names the volume. Their bytes leave the storage volume. ${CHANGE_STATUSES}`,
        tags,
        params: FileParams,
        response: { 200: ChangeAnswer },
      },
    },
    async (request) =>
      volumes.change(userOf(request), request.params.uuid, { action: 'delete', file: request.params.file }),
  );

  // ---- commits

  app.post(
    '/api/volume/:uuid/commit',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Apply several changes as one commit: in one transaction, all or nothing',
        description:
          `change: 1..${MAX_CHANGES} changes, applied in order: {action: folder, name, parent?}, ` +
          '{action: file, name, parent?, content (base64), mime_type?}, {action: content, file, ' +
          'content, mime_type?}, {action: move, file, name?, parent?}, {action: delete, file}. A file ' +
          'or parent is a UUID, the volume UUID for the root, or `#N` for what change N of this ' +
          'commit made (e.g. a folder and the files in it in one commit). Content is bounded by the ' +
          'JSON body size and MAX_UPLOAD_SIZE per file. message: 0..200 characters, kept in the ' +
          `history. Answers the commit UUID and per change the UUID it made or changed. ${EVENTS} ` +
          `${BOUNDS} ${CHANGE_STATUSES} illegal-state for a folder moved into itself. When one ` +
          'change fails, the call answers its status and no change of the commit is kept.',
        tags,
        params: ObjectParams,
        body: CommitBody,
        response: { 200: CommitAnswer },
      },
    },
    async (request) => volumes.commit(userOf(request), request.params.uuid, request.body),
  );

  app.get(
    '/api/volume/:uuid/commit',
    {
      config: { access: 'user' },
      schema: {
        summary: 'The commit history, paged (Conventions 8)',
        description:
          `Each commit: time, user, message (if given) and its changes ({action, file}). The newest ` +
          `${COMMITS_KEPT} commits of a volume are kept; each kept record counts against the owner's storage ` +
          'volume (its changes, message and 100 bytes). Status wrong-volume.',
        tags,
        params: ObjectParams,
        querystring: ListCommitsQuery,
        response: { 200: ListCommitsAnswer },
      },
    },
    async (request) => ({
      commit: await volumes.listCommits(userOf(request), request.params.uuid, request.query),
    }),
  );

  // ---- the upgrade task

  app.post(
    '/api/box/:uuid/upgrade',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Upgrade a box from a volume (the upgrade task)',
        description:
          'Needs write access to the box (wrong-box, access-denied) and read access to the volume ' +
          '(wrong-volume). The box gets the task {volume} and read-only access to the volume through ' +
          'GET /api/device/volume/{uuid}/file and /file/{file}/{xxx} with its device session; it reads ' +
          'the folders batch01, batch02, ... in order and runs run.sh of each. The call answers once ' +
          'the task is sent; every answer of the box reaches the users who may read the box as ' +
          'box_upgrade {box, volume, status, batch (intermediate answers), message (if any), done}. ' +
          'The access ends with the final answer (done true), when the box goes offline ' +
          `(status box-offline) or after ${UPGRADE_TIMEOUT} s (status fail). box-offline when the ` +
          'box holds no device session; illegal-state while an upgrade of the box runs.',
        tags: ['box'],
        params: UpgradeParams,
        body: UpgradeBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await upgrades.startUpgrade(userOf(request), request.params.uuid, request.body.volume);
      return {};
    },
  );

  app.get(
    '/api/device/volume/:uuid/file',
    {
      config: { access: 'device' },
      schema: {
        summary: 'The device reads a folder of the volume it upgrades from (the root without parent)',
        description:
          'Only while an upgrade from this volume runs on the device (wrong-volume otherwise); the ' +
          'same answer as GET /api/volume/{uuid}/file.',
        tags: ['device'],
        params: ObjectParams,
        querystring: ListFilesQuery,
        response: { 200: ListFilesAnswer },
      },
    },
    async (request) => ({
      file: await upgrades.deviceFolder(deviceOf(request), request.params.uuid, request.query),
    }),
  );

  app.get(
    '/api/device/volume/:uuid/file/:file/:name',
    {
      config: { access: 'device', binary: true },
      schema: {
        summary: 'The device reads a file of the volume it upgrades from, or HTTP 404',
        description: 'Only while an upgrade from this volume runs on the device.',
        tags: ['device'],
        params: FileDownloadParams,
        querystring: DownloadQuery,
      },
    },
    async (request, reply) => {
      const { uuid, file } = request.params;
      return sendFile(
        reply,
        await upgrades.deviceContent(deviceOf(request), uuid, file),
        isSet(request.query.inline),
      );
    },
  );
}

function deviceOf(request: Parameters<typeof sessionOf>[0]): string {
  const device = sessionOf(request).deviceUuid;
  if (!device) throw new ApiError('no-auth');
  return device;
}
