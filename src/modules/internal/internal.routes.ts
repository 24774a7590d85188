/** Routes of spec "Internal API": jeye, mwi, statistics and usage, each behind its internal permission. */
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  JeyeParams,
  ListJeyeAnswer,
  ListJeyeQuery,
  MwiAnswer,
  MwiParams,
  PostJeyeAnswer,
  PostJeyeBody,
  PostMwiAnswer,
  PostMwiBody,
  StatisticsAnswer,
  StatisticsParams,
  UsageAnswer,
  UsageParams,
} from './internal.schema.js';
import type { InternalService } from './internal.service.js';

const needs = (permission: string) => ({ access: 'internal', permission }) as const;
const DENIED = 'A user without the internal permission `%` gets access-denied.';
const denied = (permission: string) => DENIED.replace('%', permission);

export function internalRoutes(app: AppInstance, internal: InternalService): void {
  app.get(
    '/api/jeye/:host',
    {
      config: needs('jeye'),
      schema: {
        summary: "A monitored host's jeye reports, paged",
        description:
          'The reports the host posted (POST /api/jeye/{host}), by arrival: `from`/`to` (seconds), `start` (a ' +
          'report UUID, exclusive), `order`, `count` 1..5000 (default 10). An empty page (also an unknown host) is ' +
          `empty-data. ${denied('jeye')}`,
        tags: ['internal'],
        params: JeyeParams,
        querystring: ListJeyeQuery,
        response: { 200: ListJeyeAnswer },
      },
    },
    async (request) => ({ jeye: await internal.listJeye(request.params.host, request.query) }),
  );

  app.post(
    '/api/jeye/:host',
    {
      config: needs('jeye'),
      schema: {
        summary: 'A monitoring host reports (where jeye data comes from)',
        description:
          'Body `{data: {...}}`: one report of the host, any JSON object up to 64 KB (too-large beyond); answers ' +
          'its UUID. A host keeps its newest 1000 reports (the oldest go first); at most 1000 hosts report, a ' +
          `new one beyond is exceeded-limit. Monitoring hosts log in as a user holding \`jeye\`. ${denied('jeye')}`,
        tags: ['internal'],
        params: JeyeParams,
        body: PostJeyeBody,
        response: { 200: PostJeyeAnswer },
      },
    },
    async (request) => ({ uuid: await internal.postJeye(request.params.host, request.body.data) }),
  );

  app.get(
    '/api/mwi/:phone',
    {
      config: needs('mwi'),
      schema: {
        summary: 'The MWI URI of a number',
        description: `\`mwi_uri\` is absent while the number has none; a number the platform does not have is wrong-phone. ${denied('mwi')}`,
        tags: ['internal'],
        params: MwiParams,
        response: { 200: MwiAnswer },
      },
    },
    async (request) => internal.getMwi(request.params.phone),
  );

  app.post(
    '/api/mwi',
    {
      config: needs('mwi'),
      schema: {
        summary: 'Set the MWI URIs of numbers',
        description:
          'Body: PHONE -> `sip:<user>@<host>` (host a name or IPv4 address, optional port), at most 1000. Each ' +
          'number is judged on its own: stored (`phone-ok`), or left as it was (`phone-fail`: not a PHONE, not a ' +
          `platform number, or another URI form); both arrays sorted. A value that is not a string is wrong-syntax. ${denied('mwi')}`,
        tags: ['internal'],
        body: PostMwiBody,
        response: { 200: PostMwiAnswer },
      },
    },
    async (request) => {
      const { ok, fail } = await internal.postMwi(request.body);
      return { 'phone-ok': ok, 'phone-fail': fail };
    },
  );

  app.delete(
    '/api/mwi/:phone',
    {
      config: needs('mwi'),
      schema: {
        summary: 'Remove the MWI URI of a number',
        description: `A number without an MWI URI is wrong-phone. ${denied('mwi')}`,
        tags: ['internal'],
        params: MwiParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await internal.deleteMwi(request.params.phone);
      return {};
    },
  );

  app.get(
    '/api/statistics/:date',
    {
      config: needs('statistics'),
      schema: {
        summary: 'Totals of a day (UTC)',
        description:
          '`result`: `date`; `cdr` (CDRs dated that day: count, sums of t_pre and t_post in ms, fax pages, ' +
          'count per service); `users` (created that day, existing at its end); `objects.created` (objects ' +
          'created that day per type, of those still stored). A day with none of these is empty-data; a date ' +
          `that does not exist is wrong-syntax. ${denied('statistics')}`,
        tags: ['internal'],
        params: StatisticsParams,
        response: { 200: StatisticsAnswer },
      },
    },
    async (request) => ({ result: await internal.statistics(request.params.date) }),
  );

  app.get(
    '/api/usage/:month',
    {
      config: needs('usage'),
      schema: {
        summary: 'Usage of a month (UTC)',
        description:
          '`result`: `month`, `cdr`, `users` and `objects` as in GET /api/statistics for the month, and ' +
          '`partner`: partner name -> the CDRs of its users (count, t_post in ms, distinct users), for partners ' +
          `with CDRs. A month with nothing recorded is empty-data. ${denied('usage')}`,
        tags: ['internal'],
        params: UsageParams,
        response: { 200: UsageAnswer },
      },
    },
    async (request) => ({ result: await internal.usage(request.params.month) }),
  );
}
