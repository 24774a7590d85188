export { invitationRoutes } from './invitation.routes.js';
export { InvitationService } from './invitation.service.js';
