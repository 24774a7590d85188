/**
 * User accounts (spec "User", "Session and sign-up"): creation, lookup for login, internal
 * permissions. Sign-up and the /api/user routes build on this service.
 */

import type { Db } from '../../platform/database/database.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, nowSeconds } from '../../platform/ids.js';
import { hashSecret, verifySecret } from '../../platform/secrets.js';
import * as repo from './user.repository.js';

export type { UserRow } from './user.repository.js';

/** The internal permissions of decisions.md. */
export const INTERNAL_PERMISSIONS = ['jeye', 'statistics', 'usage', 'mwi', 'idcardcheck'] as const;
export type InternalPermission = (typeof INTERNAL_PERMISSIONS)[number];

export interface NewUser {
  username: string;
  password: string;
  firstname: string;
  lastname: string;
  email?: string | undefined;
  displayName?: string | undefined;
  language?: string | undefined;
  countryCode?: string | undefined;
  newsletter?: boolean | undefined;
  partnerUuid?: string | null | undefined;
}

export function usernameKey(username: string): string {
  return username.toLowerCase();
}

export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Runs inside the transaction that creates a user, so that what every user owns from the start
 * (system tags, own contact, default feature packs) exists with it or not at all.
 */
export type UserCreatedHook = (trx: Db, user: repo.UserRow) => Promise<void>;

export class UserService {
  private readonly createdHooks: UserCreatedHook[] = [];

  constructor(private readonly db: Db) {}

  /** Other areas register what a new user gets (see UserCreatedHook). */
  onUserCreated(hook: UserCreatedHook): void {
    this.createdHooks.push(hook);
  }

  /**
   * Creates a user with everything a user owns from the start; duplicate-username, or
   * already-exist when the e-mail address is in use. Pass `db` to join a caller's transaction.
   */
  async createUser(input: NewUser, db?: Db): Promise<repo.UserRow> {
    const passwordHash = await hashSecret(input.password);
    if (db) return this.insertUser(db, input, passwordHash);
    return this.db.transaction().execute((trx) => this.insertUser(trx, input, passwordHash));
  }

  private async insertUser(db: Db, input: NewUser, passwordHash: string): Promise<repo.UserRow> {
    if (await repo.findUserByUsernameKey(db, usernameKey(input.username)))
      throw new ApiError('duplicate-username');
    if (input.email && (await repo.findUserByEmailKey(db, emailKey(input.email)))) {
      throw new ApiError('already-exist', 'e-mail address already in use');
    }
    const row: repo.UserRow = {
      uuid: newUuid(),
      username: input.username,
      username_key: usernameKey(input.username),
      email: input.email ?? null,
      email_key: input.email ? emailKey(input.email) : null,
      password_hash: passwordHash,
      firstname: input.firstname,
      lastname: input.lastname,
      display_name: input.displayName ?? `${input.firstname} ${input.lastname}`,
      language: input.language ?? 'de',
      country_code: input.countryCode ?? '+49',
      newsletter: input.newsletter === false ? 0 : 1,
      partner_uuid: input.partnerUuid ?? null,
      disabled: 0,
      created: nowSeconds(),
    };
    await repo.insertUser(db, row);
    for (const hook of this.createdHooks) await hook(db, row);
    return row;
  }

  findUser(uuid: string): Promise<repo.UserRow | undefined> {
    return repo.findUserByUuid(this.db, uuid);
  }

  /** The user for a username or e-mail, whatever their case. */
  findUserByLogin(login: { username?: string | undefined; email?: string | undefined }) {
    if (login.username !== undefined) return repo.findUserByUsernameKey(this.db, usernameKey(login.username));
    if (login.email !== undefined) return repo.findUserByEmailKey(this.db, emailKey(login.email));
    return Promise.resolve(undefined);
  }

  /** The enabled user whose credentials match, or undefined; takes the same time either way. */
  async verifyCredentials(
    login: { username?: string | undefined; email?: string | undefined },
    password: string,
  ): Promise<repo.UserRow | undefined> {
    const user = await this.findUserByLogin(login);
    const ok = await verifySecret(user?.password_hash, password);
    return ok && user && user.disabled === 0 ? user : undefined;
  }

  async setPassword(uuid: string, password: string): Promise<void> {
    await repo.updateUser(this.db, uuid, { password_hash: await hashSecret(password) });
  }

  async setDisabled(uuid: string, disabled: boolean): Promise<void> {
    await repo.updateUser(this.db, uuid, { disabled: disabled ? 1 : 0 });
  }

  async setPartner(uuid: string, partnerUuid: string | null): Promise<void> {
    await repo.updateUser(this.db, uuid, { partner_uuid: partnerUuid });
  }

  listUsers(limit = 1000): Promise<repo.UserRow[]> {
    return repo.listUsers(this.db, limit);
  }

  deleteUser(uuid: string): Promise<boolean> {
    return repo.deleteUser(this.db, uuid);
  }

  hasPermission(userUuid: string, permission: string): Promise<boolean> {
    return repo.hasPermission(this.db, userUuid, permission);
  }

  grantPermission(userUuid: string, permission: InternalPermission): Promise<unknown> {
    return repo.insertPermission(this.db, userUuid, permission);
  }

  revokePermission(userUuid: string, permission: InternalPermission): Promise<boolean> {
    return repo.deletePermission(this.db, userUuid, permission);
  }

  listPermissions(userUuid?: string) {
    return repo.listPermissions(this.db, userUuid);
  }
}
