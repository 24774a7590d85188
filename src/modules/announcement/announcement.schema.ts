/** Schemas of spec "Announcement": the object calls, audio upload and download, text2speech. */
import { type Static, Type } from 'typebox';
import { SPEECH_LOCALES } from '../../platform/content/index.js';
import { DeleteQuery, ObjectParams, TagList } from '../../platform/object-store/index.js';
import { envelope, Flag, Uuid } from '../../platform/schema.js';

const Description = Type.String({ pattern: '^.{0,200}$' });

export const AnnouncementParams = ObjectParams;

export const CreateAnnouncementBody = Type.Object({ description: Type.Optional(Description) });
export type CreateAnnouncementBody = Static<typeof CreateAnnouncementBody>;

export const UpdateAnnouncementBody = Type.Object({ description: Description });
export type UpdateAnnouncementBody = Static<typeof UpdateAnnouncementBody>;

export const UuidAnswer = envelope({ uuid: Uuid });

export const ANNOUNCEMENT_STATUSES = ['record', 'ok', 'convert', 'empty', 'fail'] as const;
export type AnnouncementStatus = (typeof ANNOUNCEMENT_STATUSES)[number];

export const AnnouncementObject = Type.Object({
  owner: Uuid,
  time: Type.Integer(),
  description: Type.String(),
  status: Type.Enum(ANNOUNCEMENT_STATUSES, {
    description:
      'record: being recorded; ok: audio available; convert: an upload or text2speech is being converted; ' +
      'empty: no audio (new, or only silence); fail: the conversion failed, no audio',
  }),
  tag: TagList,
});
export type AnnouncementObject = Static<typeof AnnouncementObject>;

export const GetAnnouncementAnswer = envelope({ announcement: AnnouncementObject });

export const DeleteAnnouncementQuery = DeleteQuery;

/** did/dkey authentication and `inline` (Authentication 5, Conventions 10). */
export const DownloadQuery = Type.Object({
  inline: Flag,
  sid: Type.Optional(Type.String()),
  did: Type.Optional(Type.String({ description: 'download id of the session (instead of a session)' })),
  dkey: Type.Optional(Type.String({ description: 'base64url(md5(lower-case announcement UUID + sid))' })),
});
export type DownloadQuery = Static<typeof DownloadQuery>;

export const FileParams = Type.Object({
  uuid: Uuid,
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

export const Text2SpeechBody = Type.Object({
  text: Type.String({ pattern: '^.{1,5000}$', description: 'plain text to speak' }),
  locale: Type.Optional(Type.Enum(SPEECH_LOCALES, { description: 'default de-DE' })),
});
export type Text2SpeechBody = Static<typeof Text2SpeechBody>;
