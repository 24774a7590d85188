import { defineArea } from '../../platform/area.js';
import { AccountService } from './account.service.js';
import { userMetadataRoutes, userRoutes } from './user.routes.js';
import { UserService } from './user.service.js';

export {
  AccountService,
  type AccountServiceDeps,
  type ContactSource,
  type TagSource,
  type UsageSource,
  type UserTags,
} from './account.service.js';
export {
  CODE_LENGTH,
  CODE_LIFETIME,
  hashSecretCode,
  KEY_LENGTH,
  newSecret,
  VERIFICATION_LIFETIME,
} from './codes.js';
export { userMetadataRoutes, userRoutes } from './user.routes.js';
export { type UserObject, VALIDATIONS, type Validation } from './user.schema.js';
export {
  type CodePurpose,
  emailKey,
  INTERNAL_PERMISSIONS,
  type InternalPermission,
  type NewUser,
  type UserCreatedHook,
  type UserDeletedHook,
  type UserRow,
  UserService,
  usernameKey,
} from './user.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly users: UserService;
    readonly accounts: AccountService;
  }
}

/** Spec "User": the users themselves, made first because most areas hook into them. */
export const userArea = defineArea({
  name: 'user',
  create: (s, { clock }) => {
    const users = new UserService(s.writer, clock);
    users.onUserDeleted((w, user) => s.store.removeUser(w, user.uuid));
    return { users };
  },
});

/** Spec "User": the user's own account (GET/POST /api/user and the /api/user family). */
export const accountArea = defineArea({
  name: 'account',
  create: (s, { config, database, log, clock }) => ({
    accounts: new AccountService({
      clock,
      db: database.db,
      writer: s.writer,
      hub: s.hub,
      config,
      users: s.users,
      partners: s.partners,
      features: s.features,
      mailer: s.mailer,
      throttle: s.throttle,
      log,
      // A deleted account's sessions end everywhere, not only the one that asked.
      closeSession: (session) =>
        session.userUuid ? s.sessions.closeUserSessions(session.userUuid) : s.sessions.closeSession(session),
      closeOtherSessions: (user, keepDid) => s.sessions.closeUserSessions(user, keepDid),
      tags: s.tags,
      contacts: s.contacts,
      usage: {
        // feature.used: MB of storage volume; fax pages sent this month (the fax area, made later).
        usedOf: async (user) => ({
          volume: Math.ceil((await s.store.usedVolume(user)) / 10485.76) / 100,
          fax: await s.faxSending.usedPages(user),
          sip: await s.sip.countAccounts(user),
        }),
      },
      // The usergroup area comes later; it is asked at call time.
      usergroups: { usergroupOf: (user) => s.usergroups.usergroupOf(user) },
    }),
  }),
  routes: (app, s) => {
    userRoutes(app, s.accounts);
    userMetadataRoutes(app, s.objects);
  },
});
