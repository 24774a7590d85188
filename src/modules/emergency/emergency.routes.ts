/** Routes of spec "Partner API" GET/POST /api/partner/emergency/{user-uuid}. */
import { partnerOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { EmergencyAnswer, EmergencyBody, EmergencyParams } from './emergency.schema.js';
import type { EmergencyService } from './emergency.service.js';

const ACCESS =
  "A user who is not the partner's (or does not exist) is wrong-user; a partner without the right `emergency` " +
  '(operator CLI `partner set-rights`) is access-denied.';

export function emergencyRoutes(app: AppInstance, emergency: EmergencyService): void {
  app.get(
    '/api/partner/emergency/:user',
    {
      config: { access: 'partner' },
      schema: {
        summary: "A partner user's emergency data",
        description: `\`uui_header\`, \`emergency_police\`, \`emergency_rescue\`: each only when set. ${ACCESS}`,
        tags: ['partner'],
        params: EmergencyParams,
        response: { 200: EmergencyAnswer },
      },
    },
    async (request) => emergency.getEmergencyData(partnerOf(request), request.params.user),
  );

  app.post(
    '/api/partner/emergency/:user',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Set a partner user's emergency data",
        description:
          'The fields given change, an empty value deletes the field, the others stay. Emergency calls (110, ' +
          `112) of a user with entries are routed to the control centre by the call engine. ${ACCESS}`,
        tags: ['partner'],
        params: EmergencyParams,
        body: EmergencyBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await emergency.setEmergencyData(partnerOf(request), request.params.user, request.body);
      return {};
    },
  );
}
