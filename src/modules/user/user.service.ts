/**
 * User accounts (spec "User", "Session and sign-up"): creation, lookup for login, internal
 * permissions. Sign-up and the /api/user routes build on this service.
 */

import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, nowSeconds } from '../../platform/ids.js';
import { hashSecret, verifySecret } from '../../platform/secrets.js';
import { hashSecretCode } from './codes.js';
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
  /** The UUID promised in advance (partner-controlled sign-up); a new one otherwise. */
  uuid?: string | undefined;
}

/** What a single-use account code is for. */
export type CodePurpose = 'recovery' | 'email';

export function usernameKey(username: string): string {
  return username.toLowerCase();
}

export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Runs in the unit of work that creates a user, so that what every user owns from the start
 * (system tags, own contact, default feature packs) exists with it or not at all.
 */
export type UserCreatedHook = (w: UnitOfWork, user: repo.UserRow) => Promise<void>;

/**
 * Runs in the unit of work that deletes a user, before the user row goes, so that what the
 * user owns goes with it or the deletion fails as a whole; what must wait for the commit
 * (events, file removal) goes to `w.afterCommit`.
 */
export type UserDeletedHook = (w: UnitOfWork, user: repo.UserRow) => Promise<void>;

export class UserService {
  private readonly createdHooks: UserCreatedHook[] = [];
  private readonly deletedHooks: UserDeletedHook[] = [];

  constructor(
    private readonly writer: Writer,
    private readonly clock: Clock,
  ) {}

  private get db(): Db {
    return this.writer.db;
  }

  /** Other areas register what a new user gets (see UserCreatedHook). */
  onUserCreated(hook: UserCreatedHook): void {
    this.createdHooks.push(hook);
  }

  /** Other areas register what goes when a user is deleted (see UserDeletedHook). */
  onUserDeleted(hook: UserDeletedHook): void {
    this.deletedHooks.push(hook);
  }

  /**
   * Creates a user with everything a user owns from the start; duplicate-username, or
   * already-exist when the e-mail address is in use.
   */
  async createUser(input: NewUser): Promise<repo.UserRow> {
    const passwordHash = await hashSecret(input.password);
    return this.writer.write((w) => this.insertUser(w, input, passwordHash));
  }

  /** createUser as part of the caller's unit of work (a sign-up that uses up its verification). */
  async createUserIn(w: UnitOfWork, input: NewUser): Promise<repo.UserRow> {
    return this.insertUser(w, input, await hashSecret(input.password));
  }

  private async insertUser(w: UnitOfWork, input: NewUser, passwordHash: string): Promise<repo.UserRow> {
    const db = w.trx;
    if (await repo.findUserByUsernameKey(db, usernameKey(input.username)))
      throw new ApiError('duplicate-username');
    if (input.email && (await repo.findUserByEmailKey(db, emailKey(input.email)))) {
      throw new ApiError('already-exist', 'e-mail address already in use');
    }
    const row: repo.UserRow = {
      uuid: input.uuid ?? newUuid(),
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
      ignore_ip_whitelisting: 0,
      created: nowSeconds(this.clock),
      birthday: null,
      zip_code: null,
      town: null,
      street: null,
      house_number: null,
      country: null,
      area_code: null,
      fax_ident: null,
      fax_header: null,
      pin_hash: null,
      validation: 'incomplete',
      picture: 0,
    };
    await repo.insertUser(w.trx, row);
    for (const hook of this.createdHooks) await hook(w, row);
    return row;
  }

  /** Users created in [from, to) (seconds) and all users created before `to` (internal statistics). */
  countUsers(from: number, to: number): Promise<{ created: number; total: number }> {
    return repo.countUsers(this.db, from, to);
  }

  /** `db`: a unit of work's transaction when called inside a write. */
  findUser(uuid: string, db: Db = this.db): Promise<repo.UserRow | undefined> {
    return repo.findUserByUuid(db, uuid);
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
    // Hashed before the write: the transaction (on SQLite the only connection) does not wait for it.
    const passwordHash = await hashSecret(password);
    await this.writer.write(({ trx }) => repo.updateUser(trx, uuid, { password_hash: passwordHash }));
  }

  async setDisabled(uuid: string, disabled: boolean): Promise<void> {
    await this.writer.write(({ trx }) => repo.updateUser(trx, uuid, { disabled: disabled ? 1 : 0 }));
  }

  /** The partner's users by creation (GET /api/partner/user); see repo.listPartnerUsers. */
  listPartnerUsers(partnerUuid: string, page: Parameters<typeof repo.listPartnerUsers>[2]) {
    return repo.listPartnerUsers(this.db, partnerUuid, page);
  }

  /** Changes what a partner sets on its user (POST /api/partner/user), in the caller's unit of work. */
  async updatePartnerSettings(
    w: UnitOfWork,
    uuid: string,
    changes: { country_code?: string; ignore_ip_whitelisting?: boolean; disabled?: boolean },
  ): Promise<void> {
    const row: Partial<repo.UserRow> = {};
    if (changes.country_code !== undefined) row.country_code = changes.country_code;
    if (changes.ignore_ip_whitelisting !== undefined)
      row.ignore_ip_whitelisting = changes.ignore_ip_whitelisting ? 1 : 0;
    if (changes.disabled !== undefined) row.disabled = changes.disabled ? 1 : 0;
    if (Object.keys(row).length > 0) await repo.updateUser(w.trx, uuid, row);
  }

  async setPartner(uuid: string, partnerUuid: string | null): Promise<void> {
    await this.writer.write(({ trx }) => repo.updateUser(trx, uuid, { partner_uuid: partnerUuid }));
  }

  /**
   * Stores a single-use code (only its hash) valid for `lifetime` seconds; it replaces the
   * user's earlier codes of the same purpose. `email` is the new address of an e-mail change.
   */
  async storeCode(
    purpose: CodePurpose,
    userUuid: string,
    code: string,
    lifetime: number,
    email: string | null = null,
  ): Promise<void> {
    const now = nowSeconds(this.clock);
    await this.writer.write(async ({ trx }) => {
      await repo.deleteExpiredCodes(trx, now);
      await repo.deleteCodesOfUser(trx, userUuid, purpose);
      await repo.insertCode(trx, {
        code_hash: hashSecretCode(code),
        purpose,
        user_uuid: userUuid,
        email,
        created: now,
        expires: now + lifetime,
      });
    });
  }

  /**
   * POST /api/password: replaces the password when `code` is a live recovery code of the user,
   * and uses the code up, in one transaction. False when the code is unknown, expired, used,
   * or someone else's.
   */
  async resetPasswordWithCode(userUuid: string, code: string, password: string): Promise<boolean> {
    const codeHash = hashSecretCode(code);
    const row = await repo.findCode(this.db, codeHash);
    if (row?.purpose !== 'recovery' || row.user_uuid !== userUuid || row.expires <= nowSeconds(this.clock))
      return false;
    const passwordHash = await hashSecret(password);
    return this.writer.write(async ({ trx }) => {
      // A concurrent call may have used the code meanwhile: only one of them gets to delete it.
      if (!(await repo.deleteCode(trx, codeHash))) return false;
      await repo.deleteCodesOfUser(trx, userUuid, 'recovery');
      await repo.updateUser(trx, userUuid, { password_hash: passwordHash });
      return true;
    });
  }

  listUsers(limit = 1000): Promise<repo.UserRow[]> {
    return repo.listUsers(this.db, limit);
  }

  /**
   * Deletes a user with everything the deletion hooks remove, in one unit of work; false when
   * there was no such user.
   */
  deleteUser(uuid: string): Promise<boolean> {
    return this.writer.write(async (w) => {
      const user = await repo.findUserByUuid(w.trx, uuid);
      if (!user) return false;
      for (const hook of this.deletedHooks) await hook(w, user);
      return repo.deleteUser(w.trx, uuid);
    });
  }

  /** True when `pin` is the user's phone PIN (POST /api/user `pin`); false without a PIN. */
  async verifyPin(uuid: string, pin: string): Promise<boolean> {
    const user = await repo.findUserByUuid(this.db, uuid);
    return user?.pin_hash ? verifySecret(user.pin_hash, pin) : false;
  }

  hasPermission(userUuid: string, permission: string): Promise<boolean> {
    return repo.hasPermission(this.db, userUuid, permission);
  }

  grantPermission(userUuid: string, permission: InternalPermission): Promise<unknown> {
    return this.writer.write(({ trx }) => repo.insertPermission(trx, userUuid, permission));
  }

  revokePermission(userUuid: string, permission: InternalPermission): Promise<boolean> {
    return this.writer.write(({ trx }) => repo.deletePermission(trx, userUuid, permission));
  }

  listPermissions(userUuid?: string) {
    return repo.listPermissions(this.db, userUuid);
  }
}
