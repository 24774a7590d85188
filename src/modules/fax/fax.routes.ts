/** Routes of spec "Fax" (except sending, which comes with telephony). */
import { sessionOf, userOf } from '../../platform/access.js';
import { CONTENT_TYPES, sendBytes, sendContent } from '../../platform/content/index.js';
import { Empty, isSet } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  CreateFaxBody,
  DeleteFaxQuery,
  DownloadQuery,
  FaxParams,
  FileParams,
  GetFaxAnswer,
  PageParams,
  ReportParams,
  UpdateFaxBody,
  UploadQuery,
  UuidAnswer,
} from './fax.schema.js';
import type { FaxService } from './fax.service.js';

const DID = 'Accepts did/dkey authentication (object UUID = fax UUID); `inline` optional.';

export function faxRoutes(app: AppInstance, faxes: FaxService): void {
  const tags = ['fax'];

  app.post(
    '/api/fax',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Create a fax (object_new); status empty until a PDF is uploaded',
        description: 'The fax carries tag_all and tag_outbox of its owner.',
        tags,
        body: CreateFaxBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await faxes.createFax(userOf(request), request.body) }),
  );

  app.get(
    '/api/fax/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One fax with its reports',
        description: 'Status wrong-fax.',
        tags,
        params: FaxParams,
        response: { 200: GetFaxAnswer },
      },
    },
    async (request) => ({ fax: await faxes.getFax(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/fax/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change the description (object_modify)',
        description: 'Statuses wrong-fax, access-denied.',
        tags,
        params: FaxParams,
        body: UpdateFaxBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await faxes.updateFax(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/fax/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Move to the trash, or delete with purge (object_delete)',
        description:
          'Purge removes the pages and reports too (owner only). Statuses wrong-fax, access-denied.',
        tags,
        params: FaxParams,
        querystring: DeleteFaxQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await faxes.deleteFax(userOf(request), request.params.uuid, isSet(request.query.purge));
      return {};
    },
  );

  app.get(
    '/api/fax/:uuid/:page/:name.png',
    {
      config: { access: 'user', binary: true, didParam: 'uuid' },
      schema: {
        summary: 'One page as PNG (1-based), or HTTP 404',
        description: DID,
        tags,
        params: PageParams,
        querystring: DownloadQuery,
      },
    },
    async (request, reply) => {
      const key = await faxes.pageKey(userOf(request), request.params.uuid, request.params.page);
      return sendContent(request, reply, faxes.storage, key, {
        type: CONTENT_TYPES.png,
        inline: isSet(request.query.inline),
      });
    },
  );

  app.get(
    '/api/fax/:uuid/:name.pdf',
    {
      config: { access: 'user', binary: true, didParam: 'uuid' },
      schema: {
        summary: 'The fax as PDF (its stored pages), or HTTP 404',
        description: DID,
        tags,
        params: FileParams,
        querystring: DownloadQuery,
      },
    },
    async (request, reply) => {
      const key = await faxes.pdfKey(userOf(request), request.params.uuid);
      return sendContent(request, reply, faxes.storage, key, {
        type: CONTENT_TYPES.pdf,
        inline: isSet(request.query.inline),
      });
    },
  );

  app.get(
    '/api/fax/:uuid/:name.tif',
    {
      config: { access: 'user', binary: true, didParam: 'uuid' },
      schema: {
        summary: 'The fax as multi-page CCITT G4 TIFF, or HTTP 404',
        description: DID,
        tags,
        params: FileParams,
        querystring: DownloadQuery,
      },
    },
    async (request, reply) => {
      const key = await faxes.tiffKey(userOf(request), request.params.uuid);
      return sendContent(request, reply, faxes.storage, key, {
        type: CONTENT_TYPES.tif,
        inline: isSet(request.query.inline),
      });
    },
  );

  app.post(
    '/api/fax/:uuid/:name.pdf',
    {
      config: { access: 'user', upload: true },
      schema: {
        summary: 'Upload the PDF to send (raw body); it is converted to fax pages in the background',
        description:
          'The fax shows status convert, then ok (page_count, x_res, y_res set), empty (no pages) or fail; ' +
          'object_modify and fax_convert {fax, status, page_count (when ok)} go to its readers. ' +
          'Statuses wrong-fax, access-denied, wrong-state (a received fax, or one being or already ' +
          'transmitted), too-large, malformed-file (the fax keeps its content), quota-exceeded (the upload ' +
          "does not fit into the owner's free storage volume; a converted result that does not fit ends as fail).",
        tags,
        params: FileParams,
        querystring: UploadQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await faxes.uploadPdf(userOf(request), request.params.uuid, request.body, request.query);
      return {};
    },
  );

  app.get(
    '/api/fax/:uuid/report/:report/:name.pdf',
    {
      config: { access: 'user', binary: true, didParam: 'report' },
      schema: {
        summary: 'The report PDF of one transmission or reception, or HTTP 404',
        description:
          "Rendered from the report in the session's language, with the fax's first page when it has " +
          'content. Accepts did/dkey authentication (object UUID = report UUID); `inline` optional.',
        tags,
        params: ReportParams,
        querystring: DownloadQuery,
      },
    },
    async (request, reply) => {
      const bytes = await faxes.reportPdf(
        userOf(request),
        request.params.uuid,
        request.params.report,
        sessionOf(request).language,
      );
      return sendBytes(reply, bytes, { type: CONTENT_TYPES.pdf, inline: isSet(request.query.inline) });
    },
  );
}
