/** Routes of spec "IVR" (`/api/ivr`) and the walk simulator (Zentrale extension). */
import { userOf } from '../../platform/access.js';
import { Empty, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { missingIvrElement } from '../../telephony/decisions/index.js';
import {
  GetIvrAnswer,
  IvrBody,
  IvrParams,
  IvrSimulateAnswer,
  IvrSimulateBody,
  ListIvrAnswer,
  ListIvrQuery,
} from './ivr.schema.js';
import { type IvrService, MAX_IVRS } from './ivr.service.js';

const RULES =
  'At least one of the keys 0-9, *, # (missing-element); timeout.phone is mandatory for action call and ' +
  'timeout.announcement for play. Announcements must be readable by the caller (wrong-announcement); a key ' +
  "naming a UUID must name one of the caller's IVRs (wrong-ivr). A user keeps at most " +
  `${MAX_IVRS} IVRs (quota-exceeded).`;

export function ivrRoutes(app: AppInstance, ivrs: IvrService): void {
  app.post(
    '/api/ivr',
    {
      config: { access: 'user', requires: missingIvrElement },
      schema: {
        summary: 'Create an IVR',
        description: RULES,
        tags: ['ivr'],
        body: IvrBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await ivrs.createIvr(userOf(request), request.body) }),
  );

  app.get(
    '/api/ivr',
    {
      config: { access: 'user' },
      schema: {
        summary: "The caller's IVRs, paged (Conventions 8; count default 30, 1..500)",
        tags: ['ivr'],
        querystring: ListIvrQuery,
        response: { 200: ListIvrAnswer },
      },
    },
    async (request) => ({ ivr: await ivrs.listIvrs(userOf(request), request.query) }),
  );

  app.get(
    '/api/ivr/:uuid',
    {
      config: { access: 'user' },
      schema: { summary: 'One IVR', tags: ['ivr'], params: IvrParams, response: { 200: GetIvrAnswer } },
    },
    async (request) => ({ ivr: await ivrs.getIvr(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/ivr/:uuid',
    {
      config: { access: 'user', requires: missingIvrElement },
      schema: {
        summary: 'Replace an IVR',
        description: `The body replaces the whole IVR. ${RULES}`,
        tags: ['ivr'],
        params: IvrParams,
        body: IvrBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await ivrs.updateIvr(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/ivr/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Delete an IVR',
        description:
          'Numbers it answers are left unconfigured (phone_modify). Keys of other IVRs naming it stay; a walk ' +
          'reaching them ends (missing-ivr in the simulator; the call engine hangs up).',
        tags: ['ivr'],
        params: IvrParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await ivrs.deleteIvr(userOf(request), request.params.uuid);
      return {};
    },
  );

  app.post(
    '/api/ivr/:uuid/simulate',
    {
      config: { access: 'user' },
      schema: {
        'x-zentrale-extension': true,
        summary: 'Zentrale extension: where a DTMF sequence leads through the IVRs',
        description:
          'Body `events`: DTMF symbols and `timeout` (the IVR timeout passing), at most 100. Answer: `outcome` ' +
          '(waiting in an IVR, redirect to a number, play of the timeout announcement after which the call ends, ' +
          'or missing-ivr), the `trace` of steps, and `unread` events after the call ended. A symbol without a ' +
          'key and without `other` is ignored; a timeout without a timeout setting is ignored. Nothing is called. ' +
          'Status wrong-ivr.',
        tags: ['ivr'],
        params: IvrParams,
        body: IvrSimulateBody,
        response: { 200: IvrSimulateAnswer },
      },
    },
    async (request) => ivrs.walk(userOf(request), request.params.uuid, request.body.events),
  );
}
