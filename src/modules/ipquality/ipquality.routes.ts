/** Routes of spec "ipquality" (`/api/ipquality`): the objects, their results and the CSV download. */
import { Readable } from 'node:stream';
import { userOf } from '../../platform/access.js';
import { DeleteQuery } from '../../platform/object-store/index.js';
import { Empty, isSet, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  CreateIpqualityBody,
  CsvParams,
  CsvQuery,
  GetIpqualityAnswer,
  ListIpqualityAnswer,
  ListIpqualityQuery,
  ObjectParams,
  ResultAnswer,
  ResultQuery,
  UpdateIpqualityBody,
} from './ipquality.schema.js';
import { type IpqualityService, MAX_IPQUALITIES, MAX_RESULTS } from './ipquality.service.js';

const TAGS = ['ipquality'];

const MEASURING =
  'A measurement pairs two boxes (spec Device API, Tasks): the destination box gets ipquality_destination ' +
  '{duration, dscp, ptime, psize} and answers {remote, port} as an intermediate answer once its receiver is ' +
  'ready (within 30 s), then the source box gets ipquality_source {remote, port, duration, dscp, ptime, psize}; ' +
  'both answer their counters (p_s, p_r, t_n, t_min, t_max, t_sum, t_sq, j_n, j_max, j_sum, j_sq; p_e and l_n ' +
  'when they count them) within the duration plus 30 s. While `active` is true and a destination is set, the ' +
  'first measurement starts at once and each next one `interval` seconds after the end of the previous one; ' +
  'the schedule is kept in the database (it survives restarts, and of several nodes one runs each ' +
  'measurement). A box offline, an answer missing in time, malformed or reporting a failure gives a result ' +
  'with `error`. Objects in the trash are not measured.';

const PARAMETERS =
  'Parameters: source (box UUID), destination (box UUID; an empty string deletes it), interval (0..9999 s), ' +
  'duration (10..9999 s), active (default true), dscp (0..63, default 46), ptime (10..1000 ms, default 20), ' +
  'psize (80..2000 bytes, default 200), description (0..200 characters). The caller needs read access to ' +
  'both boxes, which must differ (wrong-box).';

export function ipqualityRoutes(app: AppInstance, ipquality: IpqualityService): void {
  app.post(
    '/api/ipquality',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Create an ipquality measurement between two boxes; answers its uuid',
        description:
          `${PARAMETERS} source, interval and duration are mandatory (missing-element). A user owns at most ` +
          `${MAX_IPQUALITIES} ipquality objects (quota-exceeded). object_new. ${MEASURING}`,
        tags: TAGS,
        body: CreateIpqualityBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await ipquality.createIpquality(userOf(request), request.body) }),
  );

  app.get(
    '/api/ipquality',
    {
      config: { access: 'user' },
      schema: {
        summary: "The caller's own ipquality objects, paged (Conventions 8; count default 50, 1..500)",
        description:
          'Objects shared by others are listed through their tags. Objects in the trash are not listed.',
        tags: TAGS,
        querystring: ListIpqualityQuery,
        response: { 200: ListIpqualityAnswer },
      },
    },
    async (request) => ({ ipquality: await ipquality.listIpqualities(userOf(request), request.query) }),
  );

  app.get(
    '/api/ipquality/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One ipquality object: its parameters, whether a measurement runs and when the next is due',
        description: 'Read access needed. Status wrong-ipquality.',
        tags: TAGS,
        params: ObjectParams,
        response: { 200: GetIpqualityAnswer },
      },
    },
    async (request) => ({ ipquality: await ipquality.getIpquality(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/ipquality/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change the parameters (each optional); object_modify',
        description:
          `${PARAMETERS} Write access needed. Changed parameters apply from the next measurement (a running one ` +
          'ends with the ones it started with and its result is kept); activating, or giving an active one its ' +
          'destination, starts a measurement at once; deactivating or deleting the destination schedules none. ' +
          'Statuses wrong-ipquality, access-denied, wrong-box.',
        tags: TAGS,
        params: ObjectParams,
        body: UpdateIpqualityBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await ipquality.updateIpquality(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/ipquality/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Move to the trash (no measurements there), or delete with purge together with the results',
        description:
          'Write access needed; purge is for the owner only. A running measurement of a purged object stores ' +
          'nothing. object_delete. Statuses wrong-ipquality, access-denied.',
        tags: TAGS,
        params: ObjectParams,
        querystring: DeleteQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await ipquality.deleteIpquality(userOf(request), request.params.uuid, isSet(request.query.purge));
      return {};
    },
  );

  app.get(
    '/api/ipquality/:uuid/result',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Results, paged (Conventions 8; count default 10, 1..1000)',
        description:
          'Read access needed. Each result: time (start), duration, and the source and destination counters; ' +
          'rfac (R-factor, ITU-T G.107 E-model) of the direction arriving at that box when the parameters ' +
          'allow an assessment: a G.711-like stream, psize = 40 + 8 * ptime bytes and ptime at most 60 ms ' +
          '(the defaults 20 ms and 200 bytes do). Loss = packets the other side sent and this side did not ' +
          'receive; one-way delay = half the mean round trip + ptime + twice the mean jitter; bursts from l_n. ' +
          `A failed measurement has \`error\` and the counters a side gave. The newest ${MAX_RESULTS} results ` +
          'are kept. Status wrong-ipquality.',
        tags: TAGS,
        params: ObjectParams,
        querystring: ResultQuery,
        response: { 200: ResultAnswer },
      },
    },
    async (request) => ({
      result: await ipquality.results(userOf(request), request.params.uuid, request.query),
    }),
  );

  app.get(
    '/api/ipquality/:uuid/result/:name.csv',
    {
      config: { access: 'user', binary: true, didParam: 'uuid' },
      schema: {
        summary: 'The results in [from, to] as CSV, streamed; HTTP 404 when refused',
        description:
          'Accepts did/dkey authentication (object UUID = ipquality UUID); `inline` optional; from and to ' +
          'required. A header row, then one row per result in time order: time, duration, the source counters ' +
          '(source_p_s, source_p_r, source_p_e, source_t_n, source_t_min, source_t_max, source_t_sum, ' +
          'source_t_sq, source_j_n, source_j_max, source_j_sum, source_j_sq, source_l_n, source_rfac), the ' +
          'destination counters in the same order, and error (empty for a measurement that succeeded); an ' +
          'absent counter is an empty field. Rows are read from the database 500 at a time while they are sent.',
        tags: TAGS,
        params: CsvParams,
        querystring: CsvQuery,
      },
    },
    async (request, reply) => {
      const { from, to, inline } = request.query;
      const lines = await ipquality.csv(userOf(request), request.params.uuid, from, to);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', isSet(inline) ? 'inline' : 'attachment')
        .send(Readable.from(lines));
    },
  );
}
