/** Routes of spec "Partner API": partner users, recovery codes and phones. */
import { partnerOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { PartnerPhoneBody } from '../phone/index.js';
import {
  ListPartnerPhonesAnswer,
  ListPartnerPhonesQuery,
  ListPartnerUsersAnswer,
  ListPartnerUsersQuery,
  PartnerCallsAnswer,
  PartnerPhoneParams,
  PartnerUserAnswer,
  PartnerUserParams,
  PostPartnerUserBody,
  RecoveryAnswer,
} from './partner-api.schema.js';
import type { PartnerApiService } from './partner-api.service.js';

const OWN_USERS = "A user who is not the partner's (or does not exist) is wrong-user.";

export function partnerApiRoutes(app: AppInstance, api: PartnerApiService): void {
  app.get(
    '/api/partner/user',
    {
      config: { access: 'partner' },
      schema: {
        summary: "The partner's users by creation, paged",
        description:
          '`from`/`to` bound the creation time (seconds); `start` is a user UUID of the partner after which the page ' +
          'begins (exclusive; then from is ignored ascending, to descending; another UUID is wrong-user); `count` ' +
          '1..500, default 50. Users created in the same second come in UUID order.',
        tags: ['partner'],
        querystring: ListPartnerUsersQuery,
        response: { 200: ListPartnerUsersAnswer },
      },
    },
    async (request) => ({ users: await api.listUsers(partnerOf(request), request.query) }),
  );

  app.get(
    '/api/partner/user/:uuid',
    {
      config: { access: 'partner' },
      schema: {
        summary: 'The partner user object',
        description: `\`phone\` is present only when the partner has the right \`phone\` (assigning numbers). ${OWN_USERS}`,
        tags: ['partner'],
        params: PartnerUserParams,
        response: { 200: PartnerUserAnswer },
      },
    },
    async (request) => api.getUser(partnerOf(request), request.params.uuid),
  );

  app.get(
    '/api/partner/user/:uuid/calls',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Calls in progress on each of the user's numbers",
        description:
          '`{phones: {number: active_call_count}}` for every number the user holds (0 when idle): live calls to ' +
          'or from the number (ringing, announcement, IVR, bridged, or placed with it as caller id) in the call ' +
          'registries of every node sharing the database (a node that does not answer within 2 s counts no ' +
          'more). ' +
          OWN_USERS,
        tags: ['partner'],
        params: PartnerUserParams,
        response: { 200: PartnerCallsAnswer },
      },
    },
    async (request) => ({ phones: await api.activeCalls(partnerOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/partner/user/:uuid',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Change a partner user's settings, disable, enable or delete it, give or take feature packs",
        description:
          "`disabled: true` ends all of the user's sessions on every node and refuses its logins until `disabled: " +
          'false`. `deleted: true` deletes the account for good as POST /api/user/delete does (other fields are then ' +
          'ignored); `deleted: false` does nothing. Feature packs are given as `feature: {pack: {add, delete}}` ' +
          "(the spec's feature.pack.add and feature.pack.delete); holding a pack already or not holding a pack taken " +
          'is no error, a name in both is taken, an unknown pack name is wrong-pack. All changes or none; ' +
          `user_modify to the user when anything changed. ${OWN_USERS}`,
        tags: ['partner'],
        params: PartnerUserParams,
        body: PostPartnerUserBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await api.modifyUser(partnerOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.post(
    '/api/partner/recovery/:uuid',
    {
      config: { access: 'partner' },
      schema: {
        summary: 'A password recovery code for a partner user',
        description:
          'The code works with POST /api/password for one hour and replaces earlier recovery codes of the user; ' +
          `nothing is mailed. A disabled user cannot use it. ${OWN_USERS}`,
        tags: ['partner'],
        params: PartnerUserParams,
        response: { 200: RecoveryAnswer },
      },
    },
    async (request) => ({ code: await api.recoveryCode(partnerOf(request), request.params.uuid) }),
  );

  app.get(
    '/api/partner/phone',
    {
      config: { access: 'partner' },
      schema: {
        summary: "The partner's numbers its users hold, number -> user UUID, paged",
        description:
          "The numbers of the partner's pool that a user holds, each with that user's UUID (the spec's shape " +
          'number -> user UUID). Free pool numbers are not listed: the shape has no value for them, and paging ' +
          'runs over the held numbers only, so a page with fewer than `count` entries is the last. Which numbers ' +
          "are free is the operator's to tell (zentrale-admin phone list --partner); POST /api/partner/phone/{user} " +
          'with `create` gives one to a user. `start` (exclusive; any number), `count` 1..500, default 50. A ' +
          'partner without the right `phone` is phone-forbidden.',
        tags: ['partner'],
        querystring: ListPartnerPhonesQuery,
        response: { 200: ListPartnerPhonesAnswer },
      },
    },
    async (request) => ({ phones: await api.listPhones(partnerOf(request), request.query) }),
  );

  app.post(
    '/api/partner/phone/:user',
    {
      config: { access: 'partner' },
      schema: {
        summary: 'Give numbers to a partner user, change their settings, take them back',
        description:
          "`create` gives free numbers of the partner's pool to the user with the settings given (the rest take " +
          'their defaults); a number a user holds is phone-duplicate, one outside the pool phone-forbidden. ' +
          "`update` changes settings of the user's numbers, `delete` takes them back into the pool, their " +
          "settings cleared; a number not the user's is wrong-phone. Defaults: dialplan_enable, call_enable, " +
          'play_announcement_only and notification_attachment false, recording_enable, fax_enable and ' +
          'conference_enable true. With dialplan_enable true, call_enable, fax_enable, conference_enable and ' +
          'recording_enable have no effect; the call API works only when call_enable is the only switch on. ' +
          "announcement and on_hold_music are the user's (wrong-syntax here). Needs the right `phone` " +
          '(phone-forbidden). create, then update, then delete; all or nothing; phone_modify to the user. ' +
          OWN_USERS,
        tags: ['partner'],
        params: PartnerPhoneParams,
        body: PartnerPhoneBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await api.changePhones(partnerOf(request), request.params.user, request.body);
      return {};
    },
  );
}
