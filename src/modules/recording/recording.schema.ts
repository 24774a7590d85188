/** Schemas of spec "Recording": the object calls and the audio downloads. */
import { type Static, Type } from 'typebox';
import { DeleteQuery, ObjectParams, TagList } from '../../platform/object-store/index.js';
import { envelope, Flag, Uuid } from '../../platform/schema.js';

const Description = Type.String({ pattern: '^.{0,200}$' });

export const RecordingParams = ObjectParams;

export const UpdateRecordingBody = Type.Object({ description: Description });
export type UpdateRecordingBody = Static<typeof UpdateRecordingBody>;

export const RECORDING_STATUSES = ['record', 'ok', 'convert', 'empty', 'fail'] as const;
export type RecordingStatus = (typeof RECORDING_STATUSES)[number];

export const RecordingObject = Type.Object({
  owner: Uuid,
  time: Type.Integer(),
  description: Type.String(),
  from: Type.String({ description: 'the caller (phone number or SIP account)' }),
  to: Type.String({ description: 'the number called' }),
  status: Type.Enum(RECORDING_STATUSES, {
    description:
      'record: in progress; ok: audio available; convert: being converted; empty: only silence; ' +
      'fail: recording or conversion failed, no audio',
  }),
  tag: TagList,
});
export type RecordingObject = Static<typeof RecordingObject>;

export const GetRecordingAnswer = envelope({ recording: RecordingObject });

export const DeleteRecordingQuery = DeleteQuery;

/** did/dkey authentication and `inline` (Authentication 5, Conventions 10). */
export const DownloadQuery = Type.Object({
  inline: Flag,
  sid: Type.Optional(Type.String()),
  did: Type.Optional(Type.String({ description: 'download id of the session (instead of a session)' })),
  dkey: Type.Optional(Type.String({ description: 'base64url(md5(lower-case recording UUID + sid))' })),
});
export type DownloadQuery = Static<typeof DownloadQuery>;

export const FileParams = Type.Object({
  uuid: Uuid,
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});
