/**
 * Schemas of the sharing routes (decisions.md "Sharing"; the spec lists them without shapes):
 * /api/user/invitation, /api/invitation/{id}, /api/user/link and GET /api/user/{user-uuid}.
 */
import { type Static, Type } from 'typebox';
import { Email, Username, Uuid } from '../../platform/formats.js';
import { named } from '../../platform/openapi/components.js';
import { envelope } from '../../platform/schema.js';

/** Invitation ids are unguessable tokens. */
export const InvitationId = Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$', description: 'invitation id' });

export const InvitationParams = Type.Object({ id: InvitationId });

export const CreateInvitationBody = Type.Object({
  username: Type.Optional(Username),
  email: Type.Optional(Email),
});
export type CreateInvitationBody = Static<typeof CreateInvitationBody>;

export const CreateInvitationAnswer = envelope({ invitation: InvitationId });

const PublicName = {
  username: Type.String(),
  display_name: Type.String(),
};

export const InvitationObject = named(
  'Invitation',
  Type.Object({
    owner: Uuid,
    owner_username: Type.String(),
    owner_display_name: Type.String(),
    user: Type.String({
      format: 'uuid',
      description:
        "the invited user; for the sender of an invitation by e-mail an alias UUID of the invitation (whether the address is a user's is not shown before it is accepted)",
    }),
    user_username: Type.Optional(
      Type.String({ description: 'absent for the sender of an invitation by e-mail' }),
    ),
    user_display_name: Type.Optional(
      Type.String({ description: 'absent for the sender of an invitation by e-mail' }),
    ),
    user_email: Type.Optional(
      Type.String({ description: 'the address invited, for the sender of an invitation by e-mail' }),
    ),
    time: Type.Integer(),
  }),
);
export type InvitationObject = Static<typeof InvitationObject>;

export const ListInvitationsAnswer = envelope({
  invitation: Type.Record(Type.String(), InvitationObject, {
    description: 'pending invitations the user sent (owner = the user) or received, by id',
  }),
});

export const GetInvitationAnswer = envelope({ invitation: InvitationObject });

export const CreateLinkBody = Type.Object({ invitation: InvitationId });
export type CreateLinkBody = Static<typeof CreateLinkBody>;

export const CreateLinkAnswer = envelope({ user: Uuid });

export const LinkObject = Type.Object({ ...PublicName, time: Type.Integer({ description: 'linked since' }) });

export const ListLinksAnswer = envelope({
  link: Type.Record(Type.String(), LinkObject, { description: 'linked users, by user UUID' }),
});

export const UserParams = Type.Object({ user: Uuid });

export const PublicUser = Type.Object({
  uuid: Uuid,
  ...PublicName,
  firstname: Type.String(),
  lastname: Type.String(),
  share_read: Uuid,
  share_write: Uuid,
  share_propagate: Uuid,
});
export type PublicUser = Static<typeof PublicUser>;

export const PublicUserAnswer = envelope({ user: PublicUser });
