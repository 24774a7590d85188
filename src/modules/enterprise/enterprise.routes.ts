/** Routes of the `/api/partner/enterprise` family (spec "Partner API", listed without a shape). */
import { partnerOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { EnterpriseAnswer, PostEnterpriseBody } from './enterprise.schema.js';
import type { EnterpriseService } from './enterprise.service.js';

const RIGHT =
  "Zentrale's design (the spec lists the route without a shape). Needs the partner right `enterprise` (operator " +
  'CLI `partner set-rights`), else access-denied.';

export function enterpriseRoutes(app: AppInstance, enterprises: EnterpriseService): void {
  app.get(
    '/api/partner/enterprise',
    {
      config: { access: 'partner' },
      schema: {
        summary: "The partner's enterprise settings",
        description: `\`description\` (default empty) and \`group_prefix_enable\` (default false). ${RIGHT}`,
        tags: ['partner'],
        response: { 200: EnterpriseAnswer },
      },
    },
    async (request) => ({ enterprise: await enterprises.getEnterprise(partnerOf(request)) }),
  );

  app.post(
    '/api/partner/enterprise',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Change the partner's enterprise settings",
        description:
          'The fields given change, the others stay. `group_prefix_enable: true` makes the prefixes of all the ' +
          "partner's usergroups active (POST /api/partner/usergroup `prefix`): a member of one group then reaches " +
          `a member of another by the group's prefix followed by the extension. ${RIGHT}`,
        tags: ['partner'],
        body: PostEnterpriseBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await enterprises.modifyEnterprise(partnerOf(request), request.body);
      return {};
    },
  );
}
