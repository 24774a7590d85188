import { defineArea } from '../../platform/area.js';
import { invitationRoutes as routes } from './invitation.routes.js';
import { InvitationService as Invitations } from './invitation.service.js';

export { invitationRoutes } from './invitation.routes.js';
export { InvitationService } from './invitation.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly invitations: Invitations;
  }
}

export const invitationArea = defineArea({
  name: 'invitation',
  create: (s, { clock }) => ({ invitations: new Invitations(s.store, s.users, clock) }),
  routes: (app, s) => routes(app, s.invitations),
});
