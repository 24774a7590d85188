/**
 * Schemas of the /api/volume family (listed in the spec without shapes; events file_new,
 * file_modify, file_delete): a volume is an object holding a tree of files and folders; every
 * change belongs to a commit.
 */
import { type Static, Type } from 'typebox';
import { Description, Uuid } from '../../platform/formats.js';
import { DeleteQuery, ObjectParams, TagList } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { pageQuery } from '../../platform/paging.js';
import { DownloadQuery, envelope } from '../../platform/schema.js';

export { DeleteQuery, DownloadQuery, ObjectParams };

export const VOLUME_LIST_COUNT = { default: 50, max: 500 };
export const FILE_LIST_COUNT = { default: 100, max: 1000 };
export const COMMIT_LIST_COUNT = { default: 50, max: 500 };
/** Volumes one user owns at most, those in the trash included (quota-exceeded beyond). */
export const MAX_VOLUMES = 100;
/** Files and folders one volume holds at most (exceeded-limit beyond). */
export const MAX_FILES = 10_000;
/** Folders above an entry at most: an entry at depth 16 cannot be made (exceeded-limit). */
export const MAX_DEPTH = 16;
/** Changes in one commit at most. */
export const MAX_CHANGES = 100;
/** Commits kept per volume: older ones leave the history. */
export const COMMITS_KEPT = 1000;
/** Bytes an entry counts against the storage volume besides its content and name. */
export const ENTRY_BYTES = 100;

export const FileName = Type.String({
  minLength: 1,
  maxLength: 255,
  // No slash, backslash or control character; "." and ".." are refused by the service.
  pattern: '^[^/\\\\\\u0000-\\u001f\\u007f]{1,255}$',
  description:
    'name of a file or folder: 1 to 255 characters without /, \\ and control characters; not . or ..',
});
export const MimeType = Type.String({
  pattern: '^[a-zA-Z0-9][a-zA-Z0-9!#$&^_.+-]{0,63}/[a-zA-Z0-9][a-zA-Z0-9!#$&^_.+-]{0,63}$',
  description: 'type/subtype (parameters dropped); default application/octet-stream',
});

/** A file or folder named in a commit: its UUID, the volume's UUID for the root, or `#N`. */
const Ref = Type.String({
  pattern: '^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|#[0-9]{1,3})$',
  description:
    'UUID of a file or folder; the volume UUID stands for the root folder; `#N` names what change N ' +
    '(0-based, earlier in the same commit) made',
});

export const FileView = named(
  'VolumeFile',
  Type.Object({
    type: Type.Union([Type.Literal('file'), Type.Literal('folder')]),
    name: Type.String(),
    parent: Type.Optional(Type.String({ description: 'UUID of the folder; absent at the root' })),
    ctime: Type.Integer({ description: 'last change of the entry: name, place or content (seconds)' }),
    mtime: Type.Integer({ description: 'last change of the content (seconds); a folder: its creation' }),
    size: Type.Optional(Type.Integer({ description: 'bytes (files only)' })),
    mime_type: Type.Optional(Type.String()),
    md5: Type.Optional(Type.String({ description: 'hex MD5 of the content (files only)' })),
  }),
);
export type FileView = Static<typeof FileView>;

export const Volume = Type.Object({
  owner: Uuid,
  time: Type.Integer(),
  description: Type.String(),
  files: Type.Integer({ description: 'files and folders in the volume' }),
  size: Type.Integer({ description: 'bytes of file content in the volume' }),
  commit: Type.Optional(Type.String({ description: 'UUID of the newest commit; absent before the first' })),
  tag: TagList,
});
export type Volume = Static<typeof Volume>;

export const CreateVolumeBody = Type.Object({ description: Type.Optional(Description) });
export type CreateVolumeBody = Static<typeof CreateVolumeBody>;
export const UpdateVolumeBody = Type.Object({ description: Description });
export type UpdateVolumeBody = Static<typeof UpdateVolumeBody>;

export const GetVolumeAnswer = envelope({ volume: Volume });
export const ListVolumesQuery = Type.Object(pageQuery(VOLUME_LIST_COUNT));
export type ListVolumesQuery = Static<typeof ListVolumesQuery>;
export const ListVolumesAnswer = envelope({
  volume: Type.Record(Type.String(), Volume, {
    description: "one page of the user's own volumes (not in the trash), keyed by UUID, in time order",
  }),
});

export const FileParams = Type.Object({ uuid: Uuid, file: Uuid });
export const FileDownloadParams = Type.Object({
  uuid: Uuid,
  file: Uuid,
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});
export const UploadParams = Type.Object({
  uuid: Uuid,
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

export const ListFilesQuery = Type.Object({
  ...pageQuery(FILE_LIST_COUNT),
  parent: Type.Optional(Uuid),
});
export type ListFilesQuery = Static<typeof ListFilesQuery>;
export const ListFilesAnswer = envelope({
  file: Type.Record(Type.String(), FileView, {
    description: "one page of the folder's entries, keyed by UUID, in order of creation",
  }),
});
export const GetFileAnswer = envelope({ file: FileView });

export const UploadQuery = Type.Object({
  name: FileName,
  parent: Type.Optional(Uuid),
});
export type UploadQuery = Static<typeof UploadQuery>;

export const FolderBody = Type.Object({ name: FileName, parent: Type.Optional(Uuid) });
export type FolderBody = Static<typeof FolderBody>;
export const MoveBody = Type.Object({ name: Type.Optional(FileName), parent: Type.Optional(Uuid) });
export type MoveBody = Static<typeof MoveBody>;

export const ChangeAnswer = envelope({
  commit: Uuid,
  file: Type.String({ description: 'UUID of the file or folder changed' }),
});

const Content = Type.String({
  pattern: '^[A-Za-z0-9+/]*={0,2}$',
  description: 'the content, base64',
});

/** One change of a commit; which fields it needs depends on `action` (missing-element otherwise). */
export const Change = Type.Object({
  action: Type.Union(
    [
      Type.Literal('folder'),
      Type.Literal('file'),
      Type.Literal('content'),
      Type.Literal('move'),
      Type.Literal('delete'),
    ],
    { description: 'folder, file, content, move or delete' },
  ),
  name: Type.Optional(FileName),
  parent: Type.Optional(Ref),
  file: Type.Optional(Ref),
  content: Type.Optional(Content),
  mime_type: Type.Optional(MimeType),
});
export type Change = Static<typeof Change>;

export const CommitBody = Type.Object({
  change: Type.Array(Change, { minItems: 1, maxItems: MAX_CHANGES }),
  message: Type.Optional(Description),
});
export type CommitBody = Static<typeof CommitBody>;

export const CommitAnswer = envelope({
  commit: Uuid,
  file: Type.Array(Type.String(), {
    description: 'per change, in order: the UUID of the file or folder it made or changed',
  }),
});

export const CommitView = named(
  'VolumeCommit',
  Type.Object({
    time: Type.Integer(),
    user: Uuid,
    message: Type.Optional(Type.String()),
    change: Type.Array(
      Type.Object({
        action: Type.String({ description: 'folder, file, content, move or delete' }),
        file: Type.String(),
      }),
    ),
  }),
);
export type CommitView = Static<typeof CommitView>;
export const ListCommitsQuery = Type.Object(pageQuery(COMMIT_LIST_COUNT));
export type ListCommitsQuery = Static<typeof ListCommitsQuery>;
export const ListCommitsAnswer = envelope({
  commit: Type.Record(Type.String(), CommitView, {
    description: 'one page of the commit history, keyed by commit UUID, in time order',
  }),
});

export const UpgradeParams = Type.Object({ uuid: Uuid });
export const UpgradeBody = Type.Object({ volume: Uuid });
export type UpgradeBody = Static<typeof UpgradeBody>;

export const DeviceFileParams = FileDownloadParams;
