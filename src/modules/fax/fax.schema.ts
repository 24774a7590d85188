/** Schemas of spec "Fax": the object calls, page/PDF/TIFF downloads, PDF upload and the report PDF. */
import { type Static, Type } from 'typebox';
import { DeleteQuery, ObjectParams, TagList } from '../../platform/object-store/index.js';
import { envelope, Flag, Uuid } from '../../platform/schema.js';

const Description = Type.String({ pattern: '^.{0,200}$' });

export const FaxParams = ObjectParams;

export const CreateFaxBody = Type.Object({ description: Type.Optional(Description) });
export type CreateFaxBody = Static<typeof CreateFaxBody>;

export const UpdateFaxBody = Type.Object({ description: Description });
export type UpdateFaxBody = Static<typeof UpdateFaxBody>;

export const UuidAnswer = envelope({ uuid: Uuid });

export const FAX_STATUSES = ['record', 'ok', 'convert', 'empty', 'fail'] as const;
export type FaxStatus = (typeof FAX_STATUSES)[number];

export const REPORT_STATUSES = ['dial', 'transmit', 'ok', 'fail', 'cancel', 'busy', 'error'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

/** A report entry as clients see it (Resources "Fax"). */
export const ReportEntry = Type.Object({
  incoming: Type.Boolean(),
  from: Type.String(),
  to: Type.String(),
  time_start: Type.Integer(),
  time_end: Type.Optional(Type.Integer()),
  status: Type.Enum(REPORT_STATUSES, {
    description:
      'dial (outgoing only), transmit, ok, fail, cancel (outgoing only, by user), busy (outgoing only), error (internal error)',
  }),
  sip_status_code: Type.Optional(Type.Integer()),
  fax_error_code: Type.Optional(Type.Integer()),
});
export type ReportEntry = Static<typeof ReportEntry>;

export const FaxObject = Type.Object({
  owner: Uuid,
  time: Type.Integer(),
  description: Type.String(),
  page_count: Type.Optional(Type.Integer({ description: 'absent while the fax has no content' })),
  x_res: Type.Optional(Type.Integer({ description: 'dpi; absent while the fax has no content' })),
  y_res: Type.Optional(Type.Integer({ description: 'dpi; absent while the fax has no content' })),
  status: Type.Enum(FAX_STATUSES, {
    description:
      'record: being received; ok: content available; convert: an upload is being converted; empty: no ' +
      'content (new, or a PDF without pages); fail: reception or conversion failed, no content',
  }),
  tag: TagList,
  report: Type.Record(Type.String(), ReportEntry, {
    description: 'report entries keyed by report UUID, ordered by time_start',
  }),
});
export type FaxObject = Static<typeof FaxObject>;

export const GetFaxAnswer = envelope({ fax: FaxObject });

export const DeleteFaxQuery = DeleteQuery;

/** did/dkey authentication and `inline` (Authentication 5, Conventions 10). */
export const DownloadQuery = Type.Object({
  inline: Flag,
  sid: Type.Optional(Type.String()),
  did: Type.Optional(Type.String({ description: 'download id of the session (instead of a session)' })),
  dkey: Type.Optional(
    Type.String({ description: 'base64url(md5(lower-case UUID named by the call + sid))' }),
  ),
});
export type DownloadQuery = Static<typeof DownloadQuery>;

export const PageParams = Type.Object({
  uuid: Uuid,
  page: Type.Integer({ minimum: 1, description: 'page number, 1-based' }),
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

export const FileParams = Type.Object({
  uuid: Uuid,
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

export const ReportParams = Type.Object({
  uuid: Uuid,
  report: Uuid,
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

export const UploadQuery = Type.Object({
  orientation: Type.Optional(
    Type.Union([Type.Literal('portrait'), Type.Literal('landscape')], {
      description: 'landscape rotates every page by 90 degrees; default portrait',
    }),
  ),
  mode: Type.Optional(
    Type.Union([Type.Literal('normal'), Type.Literal('photo')], {
      description: 'photo dithers grey instead of converting to black and white; default normal',
    }),
  ),
});
export type UploadQuery = Static<typeof UploadQuery>;
