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
