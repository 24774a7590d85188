/** Schemas of spec "Fax": the object calls, page/PDF/TIFF downloads, PDF upload and the report PDF. */
import { type Static, Type } from 'typebox';
import { FAX_HEADER, FAX_IDENT, formatted, PHONE, Uuid } from '../../platform/formats.js';
import { TagList } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { CONTENT_STATUSES, envelope, FileParams, OBJECT_FIELDS } from '../../platform/schema.js';

export const REPORT_STATUSES = [
  'queued',
  'dial',
  'transmit',
  'ok',
  'fail',
  'cancel',
  'busy',
  'error',
] as const;
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
      'queued (outgoing only: accepted, waiting for its attempt or for the retry after a busy, unanswered or ' +
      'failed one; sip_status_code and fax_error_code then tell how the last attempt ended), dial (outgoing ' +
      'only: calling), transmit (answered, pages going), ok (every page sent or received), fail, cancel ' +
      '(outgoing only, by user), busy (outgoing only: the last attempt found the line busy, 486 or 600), ' +
      'error (internal error). An outgoing report ends ok, busy, fail or error, with time_end. An incoming ' +
      'one whose node died ends fail with fax_error_code 49 (call dropped) and time_end when that node ' +
      'starts again.',
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
        'record: being received (a reception whose node died ends when that node starts again: ok with the ' +
        'pages received whole, else fail); ok: content available; convert: an upload is being converted; ' +
        'empty: no content (new, or a PDF without pages); fail: reception or conversion failed, no content',
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

export const SendBody = Type.Object({
  from: formatted(PHONE, { description: "PHONE: one of the user's unlocked numbers, the caller id" }),
  to: formatted(PHONE, { description: 'PHONE: the destination' }),
  fax_ident: Type.Optional(
    formatted(FAX_IDENT, {
      description: "station id; default the user's fax_ident (GET /api/user), without one the from number",
    }),
  ),
  fax_header: Type.Optional(
    formatted(FAX_HEADER, {
      description: "printed atop each page; default the user's fax_header (GET /api/user), without one empty",
    }),
  ),
});
export type SendBody = Static<typeof SendBody>;
