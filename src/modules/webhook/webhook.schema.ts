/** Schemas of the webhook routes (decisions.md "Event transports"; the spec has no webhooks). */
import { type Static, Type } from 'typebox';
import { Uuid } from '../../platform/formats.js';
import { envelope } from '../../platform/schema.js';

export const CreateWebhookBody = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: 2000,
    description:
      'absolute http or https URL the events are POSTed to; private, loopback and link-local addresses ' +
      'are access-denied unless the node runs with WEBHOOK_PRIVATE_URLS=on',
  }),
  event: Type.Optional(
    Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_]{0,49}$', description: 'an event name' }), {
      minItems: 1,
      maxItems: 100,
      description: 'only events of these names are delivered; absent: every event',
    }),
  ),
  secret: Type.Optional(
    Type.String({
      pattern: '^[\\x21-\\x7e]{16,200}$',
      description: 'the signing secret (16 to 200 printable characters); absent: the server makes one',
    }),
  ),
});
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

const Webhook = Type.Object(
  {
    uuid: Uuid,
    url: Type.String(),
    event: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: 'the event filter, sorted; null: every event',
    }),
    state: Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
      description: 'disabled after 8 failed deliveries in a row (a webhook_disabled event tells the owner)',
    }),
    failures: Type.Integer({ description: 'failed deliveries in a row' }),
    created: Type.Integer({ description: 'seconds since epoch' }),
  },
  { description: 'a webhook subscription; its secret is never shown again after creation' },
);

export const CreateWebhookAnswer = envelope({
  webhook: Webhook,
  secret: Type.String({ description: 'the signing secret: shown only in this answer; stored sealed' }),
});
export const ListWebhookAnswer = envelope({ webhook: Type.Array(Webhook) });
export const WebhookParams = Type.Object({ uuid: Uuid });
