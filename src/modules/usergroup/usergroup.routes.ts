/**
 * Routes of spec "Partner API" usergroups, and the usergroup credit, extension, limit and
 * zonefilter routes the spec lists without a shape (Zentrale's design).
 */
import { partnerOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  CreateUsergroupAnswer,
  CreateUsergroupBody,
  CreditAnswer,
  CreditBody,
  ExtensionAnswer,
  ExtensionBody,
  LimitAnswer,
  LimitBody,
  ListUsergroupsAnswer,
  ListUsergroupsQuery,
  ModifyUsergroupBody,
  UsergroupParams,
  UsergroupUsersAnswer,
  UsergroupUsersBody,
  ZonefilterAnswer,
  ZonefilterBody,
} from './usergroup.schema.js';
import { MAX_USERGROUPS, type UsergroupService } from './usergroup.service.js';

const ACCESS =
  'Needs the partner right `usergroup` (operator CLI `partner set-rights`), else access-denied; a usergroup ' +
  "that is not the partner's (or does not exist) is wrong-usergroup.";
const OURS = "Zentrale's design (the spec lists the route without a shape).";

export function usergroupRoutes(app: AppInstance, groups: UsergroupService): void {
  app.post(
    '/api/partner/usergroup',
    {
      config: { access: 'partner' },
      schema: {
        summary: 'Create a usergroup',
        description:
          '`description` (default empty) and `prefix` 1..9 (0 or absent: none). A prefix is unique among the ' +
          "partner's usergroups (already-exist) and active only while the enterprise flag group_prefix_enable is " +
          `on. At most ${MAX_USERGROUPS} usergroups per partner (quota-exceeded). ${ACCESS}`,
        tags: ['partner'],
        body: CreateUsergroupBody,
        response: { 200: CreateUsergroupAnswer },
      },
    },
    async (request) => ({ group_uuid: await groups.createUsergroup(partnerOf(request), request.body) }),
  );

  app.post(
    '/api/partner/usergroup/:uuid',
    {
      config: { access: 'partner' },
      schema: {
        summary: 'Change a usergroup',
        description: `The fields given change; \`prefix: 0\` removes the prefix, another group's prefix is already-exist. ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        body: ModifyUsergroupBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await groups.modifyUsergroup(partnerOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/partner/usergroup/:uuid',
    {
      config: { access: 'partner' },
      schema: {
        summary: 'Delete a usergroup',
        description: `not-empty while it has members; its credit, limit, zone filter and caller name go with it. ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await groups.deleteUsergroup(partnerOf(request), request.params.uuid);
      return {};
    },
  );

  app.post(
    '/api/partner/usergroup/:uuid/user',
    {
      config: { access: 'partner' },
      schema: {
        summary: 'Put users into a usergroup and take them out',
        description:
          "`users: {add, delete}` (the spec's users.add and users.delete). Every user named must be the " +
          "partner's (wrong-user); a user to add who is in another usergroup is already-grouped (one group per " +
          'user); adding a member or taking out a non-member is no error; a user in both lists ends outside. ' +
          'Taking a user out also takes the extension. All or nothing; user_modify to each user whose usergroup ' +
          `changed (the user object shows \`usergroup\`). A deleted user leaves its usergroup. ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        body: UsergroupUsersBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await groups.changeMembers(partnerOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.get(
    '/api/partner/usergroup',
    {
      config: { access: 'partner' },
      schema: {
        summary: "The partner's usergroups by creation, paged",
        description:
          'Conventions 8: `from`/`to` bound the creation time, `start` is a usergroup of the partner after which ' +
          'the page begins (exclusive; another UUID is wrong-usergroup), `order`, `count` 1..500, default 50. ' +
          `\`prefix\` 0 means none. Needs the partner right \`usergroup\`, else access-denied.`,
        tags: ['partner'],
        querystring: ListUsergroupsQuery,
        response: { 200: ListUsergroupsAnswer },
      },
    },
    async (request) => ({ usergroups: await groups.listUsergroups(partnerOf(request), request.query) }),
  );

  app.get(
    '/api/partner/usergroup/:uuid/user',
    {
      config: { access: 'partner' },
      schema: {
        summary: 'A usergroup with its members',
        description:
          '`usergroup`: `users` (the members in the order they were added), and, designed by Zentrale, ' +
          '`description`, `prefix` (0: none) and `prefix_active` (a prefix and the enterprise flag ' +
          `group_prefix_enable on). ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        response: { 200: UsergroupUsersAnswer },
      },
    },
    async (request) => ({
      usergroup: await groups.getUsergroupUsers(partnerOf(request), request.params.uuid),
    }),
  );

  // ---- credit, extension, limit, zonefilter

  app.get(
    '/api/partner/usergroup/:uuid/credit',
    {
      config: { access: 'partner' },
      schema: {
        summary: "A usergroup's credit",
        description: `\`credit\`: the balance, in the smallest unit of the currency (0 for a new group). ${OURS} ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        response: { 200: CreditAnswer },
      },
    },
    async (request) => ({
      credit: (await groups.getSettings(partnerOf(request), request.params.uuid)).credit,
    }),
  );

  app.post(
    '/api/partner/usergroup/:uuid/credit',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Set a usergroup's credit",
        description:
          '`credit` replaces the balance (0..10^12). The rule action set_credit sets it the same way. ' +
          `${OURS} ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        body: CreditBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await groups.setSetting(partnerOf(request), request.params.uuid, { credit: request.body.credit });
      return {};
    },
  );

  app.get(
    '/api/partner/usergroup/:uuid/extension',
    {
      config: { access: 'partner' },
      schema: {
        summary: "The extensions of a usergroup's members",
        description: `\`extensions\`: member UUID -> extension, for the members that have one. ${OURS} ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        response: { 200: ExtensionAnswer },
      },
    },
    async (request) => ({ extensions: await groups.getExtensions(partnerOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/partner/usergroup/:uuid/extension',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Set or remove extensions of a usergroup's members",
        description:
          '`extensions`: member UUID -> 1 to 6 digits, "" removes. A user who is not a member of this group is ' +
          'wrong-user; an extension two members would share is already-exist (members may swap in one call). ' +
          "Members dial each other's extension; while the group's prefix is active, members of the partner's " +
          `other groups dial the prefix followed by the extension. All or nothing. ${OURS} ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        body: ExtensionBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await groups.setExtensions(partnerOf(request), request.params.uuid, request.body.extensions);
      return {};
    },
  );

  app.get(
    '/api/partner/usergroup/:uuid/limit',
    {
      config: { access: 'partner' },
      schema: {
        summary: "A usergroup's concurrent call limit",
        description: `\`calls\`: concurrent calls of all members together; 0: no group limit. ${OURS} ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        response: { 200: LimitAnswer },
      },
    },
    async (request) => ({ calls: (await groups.getSettings(partnerOf(request), request.params.uuid)).calls }),
  );

  app.post(
    '/api/partner/usergroup/:uuid/limit',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Set a usergroup's concurrent call limit",
        description:
          "`calls` 0..10000 (0 removes the group limit). It applies beside each user's own limit from the feature " +
          `packs: a call needs room in both. ${OURS} ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        body: LimitBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await groups.setSetting(partnerOf(request), request.params.uuid, { call_limit: request.body.calls });
      return {};
    },
  );

  app.get(
    '/api/partner/usergroup/:uuid/zonefilter',
    {
      config: { access: 'partner' },
      schema: {
        summary: "A usergroup's allowed destination zones",
        description: `\`zones\`: E.164 prefixes; [] means every zone is allowed. ${OURS} ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        response: { 200: ZonefilterAnswer },
      },
    },
    async (request) => ({ zones: (await groups.getSettings(partnerOf(request), request.params.uuid)).zones }),
  );

  app.post(
    '/api/partner/usergroup/:uuid/zonefilter',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Set a usergroup's allowed destination zones",
        description:
          '`zones` replaces the list (at most 100 E.164 prefixes such as `+49` or `+4930`; duplicates are kept ' +
          'once; [] removes the filter). An outgoing call of a member to a number in E.164 form (after the ' +
          'call filter) is allowed only when the number begins with one of the zones; calls to SIP accounts and ' +
          `extensions are inside the platform and no zone. ${OURS} ${ACCESS}`,
        tags: ['partner'],
        params: UsergroupParams,
        body: ZonefilterBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await groups.setSetting(partnerOf(request), request.params.uuid, { zonefilter: request.body.zones });
      return {};
    },
  );
}
