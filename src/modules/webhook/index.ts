import { defineArea } from '../../platform/area.js';
import { loadSecretBox } from '../../platform/sealing.js';
import { webhookRoutes } from './webhook.routes.js';
import { WebhookService } from './webhook.service.js';

export { WebhookService } from './webhook.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly webhooks: WebhookService;
  }
}

/** Webhooks of users and partners (decisions.md "Event transports"). */
export const webhookArea = defineArea({
  name: 'webhook',
  create: (s, { config, clock, log }) => ({
    webhooks: new WebhookService(s.writer, s.hub, loadSecretBox(config), config, clock, log),
  }),
  routes: (app, s) => webhookRoutes(app, s.webhooks),
  start: (s) => s.webhooks.start(),
  stop: (s) => s.webhooks.stop(),
});
