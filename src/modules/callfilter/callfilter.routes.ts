/**
 * Routes of spec "Partner API" POST/GET/DELETE /api/partner/callfilter/{user-uuid}, and the
 * simulator POST /api/partner/callfilter/{user-uuid}/simulate (Zentrale extension).
 */
import { partnerOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { MAX_GROUP_DEPTH, MAX_OPERATORS } from '../../telephony/decisions/callfilter.js';
import {
  CallFilterBody,
  CallFilterParams,
  CallFilterSimulateAnswer,
  CallFilterSimulateBody,
  GetCallFilterAnswer,
} from './callfilter.schema.js';
import type { CallFilterService } from './callfilter.service.js';

const ACCESS =
  "A user who is not the partner's (or does not exist) is wrong-user; a partner without the right `callfilter` " +
  '(operator CLI `partner set-rights`) is access-denied.';

const RULES =
  'Operators (decisions.md): `{type: "replace", key, value}` rewrites every match of the RE2 pattern `key` in the ' +
  'running destination (`$1` for groups); `{type: "match", key, pass|break, reverse?}` holds when the pattern is ' +
  'found in the destination (anchor with ^ and $); `{type: "service", key, pass|break, reverse?}` holds when key ' +
  'is the call type. When a condition holds, pass true allows, pass false denies at once, break ends the current ' +
  'array (evaluation goes on after the group; at the top level the call is allowed). Nothing decided or an empty ' +
  `filter: allowed. Nested arrays are groups, at most ${MAX_GROUP_DEPTH} deep; at least one and at most ` +
  `${MAX_OPERATORS} operators (too-large), counted over the groups; patterns at most 500 characters.`;

export function callFilterRoutes(app: AppInstance, filters: CallFilterService): void {
  app.post(
    '/api/partner/callfilter/:user',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Set a partner user's call filter (replaces the one before)",
        description: `${RULES} The filter applies to every outgoing call of the user. ${ACCESS}`,
        tags: ['partner'],
        params: CallFilterParams,
        body: CallFilterBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await filters.setFilter(partnerOf(request), request.params.user, request.body.callfilter);
      return {};
    },
  );

  app.get(
    '/api/partner/callfilter/:user',
    {
      config: { access: 'partner' },
      schema: {
        summary: "A partner user's call filter",
        description: `empty-filter when the user has none. ${ACCESS}`,
        tags: ['partner'],
        params: CallFilterParams,
        response: { 200: GetCallFilterAnswer },
      },
    },
    async (request) => ({ callfilter: await filters.getFilter(partnerOf(request), request.params.user) }),
  );

  app.delete(
    '/api/partner/callfilter/:user',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Remove a partner user's call filter",
        description: `Afterwards every call of the user is allowed; a user without a filter is no error. ${ACCESS}`,
        tags: ['partner'],
        params: CallFilterParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await filters.deleteFilter(partnerOf(request), request.params.user);
      return {};
    },
  );

  app.post(
    '/api/partner/callfilter/:user/simulate',
    {
      config: { access: 'partner' },
      schema: {
        summary: 'Zentrale extension: what a call filter decides for a call, with a trace',
        description:
          'Decides an outgoing call to `destination` of type `service` by `callfilter` when given (checked as for ' +
          "POST), else by the user's stored filter; without either the call is allowed. Answers `allowed`, the " +
          "`destination` after replacements, `decided_by` (the deciding operator's path, null when none decided) " +
          `and \`trace\` (every operator that ran). Nothing is stored or called. ${ACCESS}`,
        tags: ['partner'],
        params: CallFilterParams,
        body: CallFilterSimulateBody,
        response: { 200: CallFilterSimulateAnswer },
      },
    },
    async (request) => {
      const { decidedBy, ...decision } = await filters.simulate(
        partnerOf(request),
        request.params.user,
        request.body,
      );
      return { ...decision, decided_by: decidedBy };
    },
  );
}
