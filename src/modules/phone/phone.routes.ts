/** Routes of GET/POST /api/phone (spec "Listed without a described shape") and the number simulator. */
import { userOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  ConfigurePhoneBody,
  ListPhoneAnswer,
  PhoneParams,
  PhoneSimulateAnswer,
  PhoneSimulateBody,
} from './phone.schema.js';
import type { PhoneService } from './phone.service.js';

export function phoneRoutes(app: AppInstance, phones: PhoneService): void {
  app.get(
    '/api/phone',
    {
      config: { access: 'user' },
      schema: {
        summary: "The caller's numbers with their settings",
        description:
          'Zentrale shape: `phone` maps each number to its settings: the partner switches with their defaults ' +
          '(dialplan_enable and call_enable false, recording_enable, fax_enable and conference_enable true, ' +
          'play_announcement_only false), `locked`, `answer` (what answers a call: the v2 `dialplan`, the `ivr`, ' +
          'the `legacy` dialplan when neither is set, or `disabled` while dialplan_enable is unset), the chosen ' +
          '`dialplan` or `ivr` UUID, `announcement`, `on_hold_music`, `notification_email` and ' +
          '`notification_attachment` (default false). Unset fields are absent.',
        tags: ['phone'],
        response: { 200: ListPhoneAnswer },
      },
    },
    async (request) => ({ phone: await phones.listOwnSettings(userOf(request)) }),
  );

  app.post(
    '/api/phone',
    {
      config: { access: 'user' },
      schema: {
        summary:
          'Choose per own number what answers it, its announcement, on-hold music and notifications (phone_modify)',
        description:
          'Zentrale shape: `phone` maps own numbers to changes: `dialplan` (an own v2 dialplan: wrong-dialplan) or ' +
          '`ivr` (an own IVR: wrong-ivr); setting one clears the other, both at once is wrong-syntax; ' +
          '`announcement` and `on_hold_music` (announcements the caller can read: wrong-announcement); ' +
          '`notification_email`, `notification_attachment`. An empty string clears a field. The partner switches ' +
          'are set by partners only (a user changes none of them; such fields are ignored). A number that is not ' +
          "the caller's is wrong-phone. All numbers change or none; phone_modify when anything changed.",
        tags: ['phone'],
        body: ConfigurePhoneBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await phones.configureNumbers(userOf(request), request.body);
      return {};
    },
  );

  app.post(
    '/api/phone/:number/simulate',
    {
      config: { access: 'user' },
      schema: {
        'x-zentrale-extension': true,
        summary: 'Zentrale extension: which path answers a call to an own number, and what it does',
        description:
          'The path (`answer`): the v2 dialplan set on the number, else its IVR, else the legacy dialplan; ' +
          'nothing while dialplan_enable is unset. Then that path decides: `decision` for a dialplan (caller, ' +
          'time), `walk` for an IVR (events: DTMF symbols and `timeout`), `legacy` for the legacy dialplan ' +
          '(situation call, timeout, unavailable or busy). Nothing is called or stored. Statuses wrong-phone.',
        tags: ['phone'],
        params: PhoneParams,
        body: PhoneSimulateBody,
        response: { 200: PhoneSimulateAnswer },
      },
    },
    async (request) => phones.simulateNumber(userOf(request), request.params.number, request.body),
  );
}
