/**
 * Routes of caller-name delivery: `/api/user/cnam` and `/api/partner/usergroup/{uuid}/cnam`
 * (spec route table, listed without shapes; Zentrale's design).
 */
import { partnerOf, userOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { CnamAnswer, CnamBody, UsergroupCnamParams } from './cnam.schema.js';
import type { CnamService } from './cnam.service.js';

const OURS =
  "Zentrale's design (the spec lists the route without a shape). A user's calls carry the user's own caller name, " +
  "else the one of the user's usergroup, else none.";
const GROUP =
  'Needs the partner right `usergroup` (operator CLI `partner set-rights`), else access-denied; a usergroup that ' +
  "is not the partner's is wrong-usergroup.";

export function cnamRoutes(app: AppInstance, cnams: CnamService): void {
  app.get(
    '/api/user/cnam',
    {
      config: { access: 'user' },
      schema: {
        summary: 'The caller name of your calls',
        description: `\`cnam\`, absent when you set none. ${OURS}`,
        tags: ['user'],
        response: { 200: CnamAnswer },
      },
    },
    async (request) => {
      const cnam = await cnams.getUserCnam(userOf(request));
      return cnam === undefined ? {} : { cnam };
    },
  );

  app.post(
    '/api/user/cnam',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Set the caller name of your calls',
        description: `\`cnam\` 0..50 characters; "" removes it. ${OURS}`,
        tags: ['user'],
        body: CnamBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await cnams.setUserCnam(userOf(request), request.body.cnam);
      return {};
    },
  );

  app.get(
    '/api/partner/usergroup/:uuid/cnam',
    {
      config: { access: 'partner' },
      schema: {
        summary: "A usergroup's caller name",
        description: `\`cnam\`, absent when none is set. ${OURS} ${GROUP}`,
        tags: ['partner'],
        params: UsergroupCnamParams,
        response: { 200: CnamAnswer },
      },
    },
    async (request) => {
      const cnam = await cnams.getUsergroupCnam(partnerOf(request), request.params.uuid);
      return cnam === undefined ? {} : { cnam };
    },
  );

  app.post(
    '/api/partner/usergroup/:uuid/cnam',
    {
      config: { access: 'partner' },
      schema: {
        summary: "Set a usergroup's caller name",
        description: `\`cnam\` 0..50 characters; "" removes it. ${OURS} ${GROUP}`,
        tags: ['partner'],
        params: UsergroupCnamParams,
        body: CnamBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await cnams.setUsergroupCnam(partnerOf(request), request.params.uuid, request.body.cnam);
      return {};
    },
  );
}
