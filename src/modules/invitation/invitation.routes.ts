/**
 * Routes of sharing between users (decisions.md "Sharing"): /api/user/invitation,
 * /api/invitation/{id}, /api/user/link and GET /api/user/{user-uuid}.
 */
import { userOf } from '../../platform/access.js';
import { missingLogin } from '../../platform/alternatives.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  CreateInvitationAnswer,
  CreateInvitationBody,
  CreateLinkAnswer,
  CreateLinkBody,
  GetInvitationAnswer,
  InvitationParams,
  ListInvitationsAnswer,
  ListLinksAnswer,
  PublicUserAnswer,
  UserParams,
} from './invitation.schema.js';
import type { InvitationService } from './invitation.service.js';

export function invitationRoutes(app: AppInstance, invitations: InvitationService): void {
  app.post(
    '/api/user/invitation',
    {
      config: { access: 'user', requires: missingLogin },
      schema: {
        summary: 'Invite a user by username or e-mail address (invitation_new to both)',
        description:
          'wrong-user: no such user, or oneself; already-exist: linked already or an invitation between the two ' +
          'is pending; exceeded-limit: 100 pending invitations sent.',
        tags: ['sharing'],
        body: CreateInvitationBody,
        response: { 200: CreateInvitationAnswer },
      },
    },
    async (request) => ({ invitation: await invitations.createInvitation(userOf(request), request.body) }),
  );

  app.get(
    '/api/user/invitation',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Pending invitations the user sent or received',
        tags: ['sharing'],
        response: { 200: ListInvitationsAnswer },
      },
    },
    async (request) => ({ invitation: await invitations.listInvitations(userOf(request)) }),
  );

  app.delete(
    '/api/user/invitation/:id',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Withdraw or decline an invitation (invitation_delete to both)',
        tags: ['sharing'],
        params: InvitationParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await invitations.deleteInvitation(userOf(request), request.params.id);
      return {};
    },
  );

  app.get(
    '/api/invitation/:id',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One invitation, for its sender and the invited user',
        tags: ['sharing'],
        params: InvitationParams,
        response: { 200: GetInvitationAnswer },
      },
    },
    async (request) => ({ invitation: await invitations.getInvitation(userOf(request), request.params.id) }),
  );

  app.post(
    '/api/user/link',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Accept an invitation: link with its sender',
        description:
          "The two users join each other's share tags (tag_modify; object_share for what was already tagged " +
          'with them) and the invitation is deleted (invitation_delete). Answers the linked user.',
        tags: ['sharing'],
        body: CreateLinkBody,
        response: { 200: CreateLinkAnswer },
      },
    },
    async (request) => ({
      user: await invitations.acceptInvitation(userOf(request), request.body.invitation),
    }),
  );

  app.get(
    '/api/user/link',
    {
      config: { access: 'user' },
      schema: { summary: 'Linked users', tags: ['sharing'], response: { 200: ListLinksAnswer } },
    },
    async (request) => ({ link: await invitations.listLinks(userOf(request)) }),
  );

  app.delete(
    '/api/user/link/:user',
    {
      config: { access: 'user' },
      schema: {
        summary: 'End a link',
        description:
          "Each user leaves every policy of the other's tags; objects shared between them are unshared " +
          '(object_unshare), with everything shared further from them.',
        tags: ['sharing'],
        params: UserParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await invitations.deleteLink(userOf(request), request.params.user);
      return {};
    },
  );

  app.get(
    '/api/user/:user',
    {
      config: { access: 'user' },
      schema: {
        summary: "A linked user's public profile, with their share tags",
        tags: ['sharing'],
        params: UserParams,
        response: { 200: PublicUserAnswer },
      },
    },
    async (request) => ({ user: await invitations.getPublicUser(userOf(request), request.params.user) }),
  );
}
