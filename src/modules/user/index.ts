export {
  emailKey,
  INTERNAL_PERMISSIONS,
  type InternalPermission,
  type NewUser,
  type UserRow,
  UserService,
  usernameKey,
} from './user.service.js';
