/** Schemas of spec "Announcement": the object, and the text2speech body. */
import { type Static, Type } from 'typebox';
import { SPEECH_LOCALES } from '../../platform/content/index.js';
import { TagList } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { CONTENT_STATUSES, envelope, OBJECT_FIELDS } from '../../platform/schema.js';

export const AnnouncementObject = named(
  'Announcement',
  Type.Object({
    ...OBJECT_FIELDS,
    status: Type.Enum(CONTENT_STATUSES, {
      description:
        'record: being recorded; ok: audio available; convert: an upload or text2speech is being converted; ' +
        'empty: no audio (new, or only silence); fail: the conversion failed, no audio',
    }),
    tag: TagList,
  }),
);
export type AnnouncementObject = Static<typeof AnnouncementObject>;

export const GetAnnouncementAnswer = envelope({ announcement: AnnouncementObject });

export const Text2SpeechBody = Type.Object({
  text: Type.String({ pattern: '^.{1,5000}$', description: 'plain text to speak' }),
  locale: Type.Optional(Type.Enum(SPEECH_LOCALES, { description: 'default de-DE' })),
});
export type Text2SpeechBody = Static<typeof Text2SpeechBody>;
