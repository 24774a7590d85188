export {
  emailKey,
  INTERNAL_PERMISSIONS,
  type InternalPermission,
  type NewUser,
  type UserCreatedHook,
  type UserRow,
  UserService,
  usernameKey,
} from './user.service.js';
