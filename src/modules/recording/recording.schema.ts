/** Schemas of spec "Recording": the object (its calls and downloads use the shared pieces). */
import { type Static, Type } from 'typebox';
import { TagList } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { CONTENT_STATUSES, envelope, OBJECT_FIELDS } from '../../platform/schema.js';

export const RecordingObject = named(
  'Recording',
  Type.Object({
    ...OBJECT_FIELDS,
    from: Type.String({ description: 'the caller (phone number or SIP account)' }),
    to: Type.String({ description: 'the number called' }),
    status: Type.Enum(CONTENT_STATUSES, {
      description:
        'record: in progress; ok: audio available; convert: being converted; empty: only silence; ' +
        'fail: recording or conversion failed, no audio',
    }),
    tag: TagList,
  }),
);
export type RecordingObject = Static<typeof RecordingObject>;

export const GetRecordingAnswer = envelope({ recording: RecordingObject });
