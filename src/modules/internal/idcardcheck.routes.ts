/**
 * Routes of spec "Internal API" for the id card check: a checker holding the internal
 * permission `idcardcheck` lists the open jobs, reads the address and the PDF of each, and
 * posts the result, which becomes the user's `validation`.
 */

import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import type { AccountService } from '../user/index.js';
import {
  AddressAnswer,
  DocumentParams,
  DocumentQuery,
  JobParams,
  ListJobsAnswer,
  ResultBody,
} from './idcardcheck.schema.js';

const access = { access: 'internal', permission: 'idcardcheck' } as const;

export function idcardcheckRoutes(app: AppInstance, accounts: AccountService): void {
  app.get(
    '/api/idcardcheck',
    {
      config: access,
      schema: {
        summary: 'Open id card jobs',
        description: 'Status access-denied.',
        tags: ['internal'],
        response: { 200: ListJobsAnswer },
      },
    },
    async () => ({ jobs: await accounts.listIdcardJobs() }),
  );

  app.get(
    '/api/idcardcheck/:uuid/address',
    {
      config: access,
      schema: {
        summary: 'The address the id card of a job is checked against',
        description: 'Statuses wrong-job, access-denied.',
        tags: ['internal'],
        params: JobParams,
        response: { 200: AddressAnswer },
      },
    },
    async (request) => ({ user: await accounts.idcardAddress(request.params.uuid) }),
  );

  app.get(
    '/api/idcardcheck/:uuid/idcard/:name.pdf',
    {
      config: { ...access, binary: true, didParam: 'uuid' },
      schema: {
        summary: 'The id card of a job (PDF), or HTTP 404',
        description: 'Accepts did/dkey authentication (object UUID = job UUID).',
        tags: ['internal'],
        params: DocumentParams,
        querystring: DocumentQuery,
      },
    },
    async (request, reply) => {
      const pdf = await accounts.idcardDocument(request.params.uuid);
      const disposition = request.query.inline === undefined ? 'attachment' : 'inline';
      return reply
        .type('application/pdf')
        .header('content-disposition', `${disposition}; filename="idcard.pdf"`)
        .header('cache-control', 'private, no-store')
        .send(pdf);
    },
  );

  app.post(
    '/api/idcardcheck/:uuid',
    {
      config: access,
      schema: {
        summary: 'Result of the check of a job',
        description:
          "The result becomes the user's `validation` (user_modify); the job is closed and the " +
          'copy of the id card deleted. Statuses wrong-job, access-denied.',
        tags: ['internal'],
        params: JobParams,
        body: ResultBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await accounts.setIdcardResult(request.params.uuid, request.body.validation);
      return {};
    },
  );
}
