/** Webhook routes of users and partners (decisions.md "Event transports"; the spec has none). */
import type { FastifyRequest } from 'fastify';
import { partnerOf, userOf } from '../../platform/access.js';
import { documentWebhook } from '../../platform/openapi-webhooks.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  CreateWebhookAnswer,
  CreateWebhookBody,
  ListWebhookAnswer,
  WebhookParams,
} from './webhook.schema.js';
import {
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  WEBHOOK_FAILURES_MAX,
  WEBHOOK_MAX,
  type WebhookService,
} from './webhook.service.js';

const DELIVERY =
  'Each event is POSTed as JSON, the same object as in GET /api/event (`id`, `event`, `time` and the ' +
  "payload fields) except that `id` counts the subscription's own deliveries (0, 1, 2...). Headers: " +
  `\`${TIMESTAMP_HEADER}\` (seconds since epoch) and \`${SIGNATURE_HEADER}: v1=<hex>\`, the HMAC-SHA256 ` +
  'with the secret of `<timestamp>.<raw body>`; verify by computing it over the raw body, comparing in ' +
  'constant time, and refusing timestamps older than a few minutes. A 2xx answer within 10 seconds ' +
  'delivers; anything else (redirects included) is retried after 1 s, 2 s, 4 s... (up to an hour), in ' +
  `order: the next event waits for the one before (at least once, in order). After ${WEBHOOK_FAILURES_MAX} ` +
  'failures in a row the subscription is disabled and the owner gets a `webhook_disabled` event ' +
  `(webhook, url, failures). At most ${WEBHOOK_MAX} subscriptions per owner (exceeded-limit).`;

function routesFor(
  app: AppInstance,
  prefix: string,
  access: 'user' | 'partner',
  ownerOf: (request: FastifyRequest) => string,
  webhooks: WebhookService,
): void {
  const who = access === 'user' ? "the user's" : "the partner's own";
  app.post(
    prefix,
    {
      config: { access },
      schema: {
        summary: `Subscribe a URL to ${who} events`,
        description: `${DELIVERY} Statuses: wrong-syntax (not an absolute http(s) URL), access-denied (a private address), exceeded-limit.`,
        tags: ['webhook'],
        body: CreateWebhookBody,
        response: { 200: CreateWebhookAnswer },
      },
    },
    async (request) => {
      const { url, event, secret } = request.body;
      return webhooks.create(ownerOf(request), url, event, secret);
    },
  );
  app.get(
    prefix,
    {
      config: { access },
      schema: {
        summary: `${access === 'user' ? "The user's" : "The partner's"} webhook subscriptions`,
        tags: ['webhook'],
        response: { 200: ListWebhookAnswer },
      },
    },
    async (request) => ({ webhook: await webhooks.list(ownerOf(request)) }),
  );
  app.delete(
    `${prefix}/:uuid`,
    {
      config: { access },
      schema: {
        summary: 'End a webhook subscription',
        description: "Undelivered events are dropped. wrong-webhook: unknown or not the caller's.",
        tags: ['webhook'],
        params: WebhookParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await webhooks.remove(ownerOf(request), request.params.uuid);
      return {};
    },
  );
}

const signedHeaders = [
  {
    name: TIMESTAMP_HEADER,
    in: 'header',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
    description: 'seconds since epoch, signed with the body',
  },
  {
    name: SIGNATURE_HEADER,
    in: 'header',
    required: true,
    schema: { type: 'string', pattern: '^v1=[0-9a-f]{64}$' },
    description: 'v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>" with the secret>',
  },
  {
    name: 'zentrale-webhook',
    in: 'header',
    required: true,
    schema: { type: 'string', format: 'uuid' },
    description: 'the subscription',
  },
];

function delivery(summary: string, body: Record<string, unknown>): Record<string, unknown> {
  return {
    post: {
      summary,
      description: DELIVERY,
      parameters: signedHeaders,
      requestBody: { required: true, content: { 'application/json': { schema: body } } },
      responses: { '2XX': { description: 'delivered; anything else is retried' } },
    },
  };
}

export function webhookRoutes(app: AppInstance, webhooks: WebhookService): void {
  documentWebhook(
    'event',
    delivery('An event of the subscription owner', {
      type: 'object',
      required: ['id', 'event', 'time'],
      additionalProperties: true,
      properties: {
        id: { type: 'integer', description: "the subscription's delivery sequence: 0, 1, 2..." },
        event: { type: 'string', description: 'event name (as in GET /api/event)' },
        time: { type: 'integer', description: 'seconds since epoch' },
      },
    }),
  );
  documentWebhook(
    'webhook_disabled',
    delivery("Also an event on the owner's channel: a subscription was disabled after repeated failure", {
      type: 'object',
      required: ['id', 'event', 'time', 'webhook', 'url', 'failures'],
      properties: {
        id: { type: 'integer' },
        event: { const: 'webhook_disabled' },
        time: { type: 'integer' },
        webhook: { type: 'string', format: 'uuid', description: 'the disabled subscription' },
        url: { type: 'string' },
        failures: { type: 'integer', description: 'failures in a row' },
      },
    }),
  );
  routesFor(app, '/api/webhook', 'user', userOf, webhooks);
  routesFor(app, '/api/partner/webhook', 'partner', partnerOf, webhooks);
}
