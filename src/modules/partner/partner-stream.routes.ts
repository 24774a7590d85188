/** Routes of spec "Partner API": user and CDR event streams, and the CDR list of a number. */
import { partnerOf, sessionOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  ListPartnerCdrAnswer,
  ListPartnerCdrQuery,
  PartnerCdrParams,
  SubscribeQuery,
} from './partner-stream.schema.js';
import {
  CDR_EVENT,
  OBSERVABLE_USER_EVENTS,
  type PartnerStreamService,
  type StreamKind,
} from './partner-stream.service.js';

const SPLIT =
  'With several subscribing sessions (on any nodes) the stream is split among them: each event goes to exactly ' +
  'one session, which receives it through GET /api/event. A session takes its share while it polls GET /api/event ' +
  '(a held long-poll, or a poll with timeout 0, takes up to 100 waiting events); a session that does not poll, ' +
  'whose subscription expired or was cancelled, or that ended (closed, deleted, idle) is dead for the stream and ' +
  'the others get its share: nothing is lost or delivered twice. Events no subscriber takes within 10 minutes are ' +
  'dropped (at most 10,000 wait per stream); while no session of the partner is subscribed, none are kept. An ' +
  'event filter (POST /api/event/filter) of the session also limits what it takes.';

const STREAMS: Record<StreamKind, { summary: string; description: string }> = {
  user: {
    summary: "Subscribe the session to the partner's user events",
    description:
      `Events of the partner's users: ${OBSERVABLE_USER_EVENTS.join(', ')} and conference_*, each with the ` +
      "user's payload plus `user` (the user's UUID); in sip_register and sip_unregister the SIP account's name, " +
      '`user` for the user, is `sip` here. ',
  },
  cdr: {
    summary: "Subscribe the session to CDRs of the partner's users",
    description:
      `One \`${CDR_EVENT}\` event per CDR written for a user of the partner: \`cdr\` (the record as in GET ` +
      '/api/partner/cdr/{phone}) and `user` (its owner). Needs the right `cdr` (access-denied). ',
  },
};

export function partnerStreamRoutes(app: AppInstance, streams: PartnerStreamService): void {
  for (const stream of ['user', 'cdr'] as const) {
    app.get(
      `/api/partner/${stream}/event`,
      {
        config: { access: 'partner' },
        schema: {
          summary: STREAMS[stream].summary,
          description: `${STREAMS[stream].description}The subscription lasts \`timeout\` seconds (1..36000, default 3600) and is renewed by calling again. ${SPLIT}`,
          tags: ['partner'],
          querystring: SubscribeQuery,
          response: { 200: Empty },
        },
      },
      async (request) => {
        await streams.subscribe(sessionOf(request), stream, request.query.timeout ?? 3600);
        return {};
      },
    );
    app.delete(
      `/api/partner/${stream}/event`,
      {
        config: { access: 'partner' },
        schema: {
          summary: `Cancel the session's ${stream} event subscription`,
          description: 'Not subscribed: ok too. Events the session already took stay in its queue.',
          tags: ['partner'],
          response: { 200: Empty },
        },
      },
      async (request) => {
        await streams.unsubscribe(sessionOf(request), stream);
        return {};
      },
    );
  }

  app.get(
    '/api/partner/cdr/:phone',
    {
      config: { access: 'partner' },
      schema: {
        summary: 'The CDRs of a number of one of the partner’s users, paged',
        description:
          '`from`/`to` bound the call date (seconds), `start` is a CDR id (exclusive), `order` asc (default) or ' +
          'desc, `count` 1..5000 (default 10). Records of the number written while it was with a user of this ' +
          "partner. A number that is not held by one of the partner's users is wrong-phone; a partner without the " +
          'right `cdr` gets access-denied. The answer is written while the records are read from the database.',
        tags: ['partner'],
        params: PartnerCdrParams,
        querystring: ListPartnerCdrQuery,
        response: { 200: ListPartnerCdrAnswer },
      },
    },
    async (request, reply) => {
      const body = await streams.cdrListing(partnerOf(request), request.params.phone, request.query);
      // A stream of JSON text: the schema documents it, the serializer does not see it.
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  );
}
