/** Schemas of spec "Fax": the object calls, page/PDF/TIFF downloads, PDF upload and the report PDF. */
import { type Static, Type } from 'typebox';
import { Uuid } from '../../platform/formats.js';
import { TagList } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { CONTENT_STATUSES, envelope, FileParams, OBJECT_FIELDS } from '../../platform/schema.js';

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

export const FaxObject = named(
  'Fax',
  Type.Object({
    ...OBJECT_FIELDS,
    page_count: Type.Optional(Type.Integer({ description: 'absent while the fax has no content' })),
    x_res: Type.Optional(Type.Integer({ description: 'dpi; absent while the fax has no content' })),
    y_res: Type.Optional(Type.Integer({ description: 'dpi; absent while the fax has no content' })),
    status: Type.Enum(CONTENT_STATUSES, {
      description:
        'record: being received; ok: content available; convert: an upload is being converted; empty: no ' +
        'content (new, or a PDF without pages); fail: reception or conversion failed, no content',
    }),
    tag: TagList,
    report: Type.Record(Type.String(), ReportEntry, {
      description: 'report entries keyed by report UUID, ordered by time_start',
    }),
  }),
);
export type FaxObject = Static<typeof FaxObject>;

export const GetFaxAnswer = envelope({ fax: FaxObject });

export const ReportParams = Type.Object({ uuid: Uuid, report: Uuid, name: FileParams.properties.name });

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
