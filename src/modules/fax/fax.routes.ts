/** Routes of spec "Fax". */
import { sessionOf, userOf } from '../../platform/access.js';
import { downloadRoute, objectRoutes, uploadRoute } from '../../platform/content/content-object.routes.js';
import { CONTENT_TYPES, sendBytes } from '../../platform/content/index.js';
import { ObjectParams } from '../../platform/object-store/index.js';
import { DownloadQuery, FileParams, isSet, PageParams, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { MAX_ATTEMPTS } from './fax.queue.js';
import { GetFaxAnswer, ReportParams, SendBody, UploadQuery } from './fax.schema.js';
import { type FaxSending, MAX_QUEUED_PER_USER } from './fax.send.js';
import type { FaxService } from './fax.service.js';

export function faxRoutes(app: AppInstance, faxes: FaxService, sending: FaxSending): void {
  const type = 'fax';
  const { storage } = faxes;

  objectRoutes(app, {
    type,
    wrong: 'wrong-fax',
    answer: GetFaxAnswer,
    create: {
      summary: 'Create a fax (object_new); status empty until a PDF is uploaded',
      description: 'The fax carries tag_all and tag_outbox of its owner.',
      run: (user, body) => faxes.createFax(user, body),
    },
    get: { summary: 'One fax with its reports', run: (user, uuid) => faxes.getFax(user, uuid) },
    update: (user, uuid, body) => faxes.updateFax(user, uuid, body),
    delete: {
      note: 'Purge removes the pages and reports too (owner only).',
      run: (user, uuid, purge) => faxes.deleteFax(user, uuid, purge),
    },
  });

  downloadRoute(app, '/api/fax/:uuid/:page/:name.png', {
    type,
    summary: 'One page as PNG (1-based), or HTTP 404',
    params: PageParams,
    contentType: CONTENT_TYPES.png,
    storage,
    key: (user, params) => faxes.pageKey(user, params.uuid, params.page),
  });

  downloadRoute(app, '/api/fax/:uuid/:name.pdf', {
    type,
    summary: 'The fax as PDF (its stored pages), or HTTP 404',
    params: FileParams,
    contentType: CONTENT_TYPES.pdf,
    storage,
    key: (user, params) => faxes.pdfKey(user, params.uuid),
  });

  downloadRoute(app, '/api/fax/:uuid/:name.tif', {
    type,
    summary: 'The fax as multi-page CCITT G4 TIFF, or HTTP 404',
    params: FileParams,
    contentType: CONTENT_TYPES.tif,
    storage,
    key: (user, params) => faxes.tiffKey(user, params.uuid),
  });

  uploadRoute(app, '/api/fax/:uuid/:name.pdf', {
    type,
    summary: 'Upload the PDF to send (raw body); it is converted to fax pages in the background',
    description:
      'The fax shows status convert, then ok (page_count, x_res, y_res set), empty (no pages) or fail; ' +
      'object_modify and fax_convert {fax, status, page_count (when ok)} go to its readers. ' +
      'Statuses wrong-fax, access-denied, wrong-state (a received fax, or one being or already ' +
      'transmitted), too-large, malformed-file (the fax keeps its content), quota-exceeded (the upload ' +
      "with the owner's uploads still converting, does not fit into the owner's free storage volume, or " +
      "has more pages than the owner's monthly fax quota; a converted result that does not fit ends as " +
      'fail), exceeded-limit (10 objects of the owner are converting). More than 500 pages, or a page ' +
      'drawing images of more than 100 million pixels, is too-large; a newer upload supersedes a ' +
      'conversion still running.',
    querystring: UploadQuery,
    run: (user, uuid, body, query) => faxes.uploadPdf(user, uuid, body, query),
  });

  app.get(
    '/api/fax/:uuid/report/:report/:name.pdf',
    {
      config: { access: 'user', binary: true, didParam: 'report' },
      schema: {
        summary: 'The report PDF of one transmission or reception, or HTTP 404',
        description:
          "Rendered from the report in the session's language, with the fax's first page when it has " +
          'content. Accepts did/dkey authentication (object UUID = report UUID); `inline` optional.',
        tags: [type],
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

  app.post(
    '/api/fax/:uuid/send',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Send the fax: answers the UUID of its outgoing report at once; the transmission is queued',
        description:
          'The report starts queued (fax_report to the readers) and follows the transmission: dial, transmit, ' +
          "then ok with page_count, or back to queued with the attempt's sip_status_code and fax_error_code " +
          `before a retry (busy, no answer, failed T.30: ${MAX_ATTEMPTS} attempts, the first retry after ` +
          'FAX_RETRY_SECONDS, default 120 s, the second after twice that), and finally busy or fail with ' +
          "time_end, sip_status_code and fax_error_code (the T.30 completion code). At most the user's " +
          'concurrent call limit of their faxes and one fax per destination are sent at once; the queue survives ' +
          'a restart. Statuses illegal-state (no fax engine: libspandsp cannot be loaded on the server; ' +
          'checked first), wrong-fax, access-denied (no write access), wrong-phone (from is not one of the ' +
          "user's numbers), locked-phone (from not unlocked yet), forbidden-to (an expensive or premium " +
          'destination, see docs/decisions.md "Sending faxes", without the feature call_unrestricted), ' +
          'no-content (the fax has no pages), quota-exceeded (the pages sent this month, those of the ' +
          `user's queued faxes and this fax's above quota.fax, or ${MAX_QUEUED_PER_USER} faxes of the user ` +
          'queued); each changes nothing.',
        tags: [type],
        params: ObjectParams,
        body: SendBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await sending.send(userOf(request), request.params.uuid, request.body) }),
  );
}
