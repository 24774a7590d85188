/**
 * The account of the signed-in user (spec "User": GET/POST /api/user, and the account routes
 * listed without a shape: profile picture, id card, account deletion). Every change emits
 * `user_modify` to all sessions of the user.
 *
 * Decisions where the spec is silent: the six address fields change together and any change of
 * them voids the address validation (back to incomplete, open id card jobs dropped); an empty
 * area_code, fax_ident or fax_header removes the field; an e-mail change mails a code to the
 * new address and takes effect when that code comes back (wrong-code otherwise), an address
 * in use by another account gets no code but the same answer, and such mails are throttled per
 * account and per address; wrong old passwords and codes are throttled per account; a password
 * change ends the account's other sessions on every node.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import sharp from 'sharp';
import type { SessionContext } from '../../platform/access.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError, NotFoundError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import { writeFileAtomically } from '../../platform/files.js';
import { newUuid, nowSeconds } from '../../platform/ids.js';
import type { Mailer } from '../../platform/mail.js';
import { hashSecret, verifySecret } from '../../platform/secrets.js';
import type { Throttle } from '../../platform/throttle/throttle.js';
import type { FeatureService } from '../feature/index.js';
import { CODE_LENGTH, CODE_LIFETIME, hashSecretCode, newSecret } from './codes.js';
import { readUpload } from './upload.js';
import * as repo from './user.repository.js';
import { ADDRESS_FIELDS, type PostUserBody, type UserObject, type Validation } from './user.schema.js';
import { emailKey, type UserService } from './user.service.js';

/** The system and share tags of a user (owned by the tag area). */
export interface UserTags {
  tag_all: string;
  tag_unread: string;
  tag_inbox: string;
  tag_outbox: string;
  tag_trash: string;
  tag_shared: string;
  share_read: string;
  share_write: string;
  share_propagate: string;
}

export interface TagSource {
  getUserTags(userUuid: string): Promise<UserTags | undefined>;
}

export interface ContactSource {
  /** UUID of the user's own contact object. */
  getOwnContact(userUuid: string): Promise<string | undefined>;
}

/** Current usage: storage volume in MB and fax pages of the current month. */
export interface UsageSource {
  usedOf(userUuid: string): Promise<{ volume: number; fax: number; sip: number }>;
}

export interface AccountServiceDeps {
  db: Db;
  /** Every write goes through it (the platform's unit of work). */
  writer: Writer;
  hub: EventHub;
  config: Pick<Config, 'dataDir' | 'maxUploadSize'>;
  users: UserService;
  /** The partner area's service; declared here, as the partner area depends on this one. */
  partners: { findPartner(uuid: string): Promise<{ name: string } | undefined> };
  features: FeatureService;
  mailer: Mailer;
  throttle: Throttle;
  log: FastifyBaseLogger;
  /** The wall clock (birthdays, code expiries, stamps). */
  clock: Clock;
  /** Closes the session that deleted its account. */
  closeSession: (session: SessionContext) => Promise<void>;
  /** Closes the user's sessions on every node but the one given (password changed). */
  closeOtherSessions: (userUuid: string, keepDid: string) => Promise<void>;
  tags?: TagSource | undefined;
  contacts?: ContactSource | undefined;
  usage?: UsageSource | undefined;
  /** The user's usergroup (partner API), for the user object's `usergroup`. */
  usergroups?: { usergroupOf(userUuid: string): Promise<string | undefined> } | undefined;
}

/** Profile pictures are stored re-encoded as PNG, at most this many pixels a side. */
export const PICTURE_SIZE = 512;
// Decoding stops beyond this many pixels: a small file must not unpack into gigabytes.
const PICTURE_INPUT_PIXELS = 50_000_000;

const TEXT_FIELDS = ['firstname', 'lastname', 'display_name', 'country_code', 'language'] as const;
/** Fields an empty string removes. */
const REMOVABLE_FIELDS = ['area_code', 'fax_ident', 'fax_header'] as const;

/** A real calendar date, not in the future and not before 1900. */
function checkBirthday(value: string, now: number): void {
  const date = new Date(`${value}T00:00:00Z`);
  if (
    Number.isNaN(date.getTime()) ||
    date.toISOString().slice(0, 10) !== value ||
    date.getUTCFullYear() < 1900 ||
    date.getTime() > now
  )
    throw new ApiError('wrong-syntax', 'bad birthday');
}

export class AccountService {
  constructor(private readonly deps: AccountServiceDeps) {}

  private get db(): Db {
    return this.deps.db;
  }

  private async requireUser(userUuid: string): Promise<repo.UserRow> {
    const user = await repo.findUserByUuid(this.db, userUuid);
    // The account was deleted while this session lived on.
    if (!user) throw new ApiError('no-auth', 'the account no longer exists');
    return user;
  }

  private modified(userUuid: string): void {
    this.deps.hub.emit({ users: [userUuid] }, 'user_modify', {});
  }

  /** GET /api/user. */
  async getUser(userUuid: string): Promise<UserObject> {
    const { features, partners, tags, contacts, usage, usergroups } = this.deps;
    const user = await this.requireUser(userUuid);
    const [quota, partner, userTags, contact, used, usergroup] = await Promise.all([
      features.quotaOf(userUuid),
      user.partner_uuid ? partners.findPartner(user.partner_uuid) : undefined,
      tags?.getUserTags(userUuid),
      contacts?.getOwnContact(userUuid),
      usage?.usedOf(userUuid),
      usergroups?.usergroupOf(userUuid),
    ]);
    const answer: UserObject = {
      uuid: user.uuid,
      username: user.username,
      firstname: user.firstname,
      lastname: user.lastname,
      display_name: user.display_name,
      language: user.language,
      newsletter: user.newsletter === 1,
      country_code: user.country_code,
      validation: user.validation as Validation,
      feature: {
        pack: quota.pack,
        quota: quota.quota,
        // Without objects and faxes nothing is in use; the areas that store them report usage.
        used: used ?? { volume: 0, fax: 0, sip: 0 },
        feature: quota.feature,
      },
      picture: user.picture === 1,
      ...userTags,
    };
    if (user.email !== null) answer.email = user.email;
    if (partner) answer.partner = partner.name;
    if (contact) answer.contact = contact;
    if (usergroup) answer.usergroup = usergroup;
    for (const field of [...ADDRESS_FIELDS, ...REMOVABLE_FIELDS]) {
      const value = user[field];
      if (value !== null) answer[field] = value;
    }
    return answer;
  }

  /** POST /api/user: every field optional; one transaction; user_modify when anything changed. */
  async modifyUser(session: SessionContext, userUuid: string, body: PostUserBody): Promise<void> {
    const { throttle, mailer } = this.deps;
    const given = ADDRESS_FIELDS.filter((field) => body[field] !== undefined);
    if (given.length > 0 && given.length < ADDRESS_FIELDS.length) {
      const missing = ADDRESS_FIELDS.find((field) => body[field] === undefined);
      throw new ApiError('missing-element', `missing ${missing} (the address fields go together)`);
    }
    if (body.password !== undefined && body.old_password === undefined)
      throw new ApiError('missing-element', 'missing old_password');
    if (body.email !== undefined && body.code !== undefined)
      throw new ApiError('wrong-syntax', 'email (first step) and code (second step) go in separate calls');
    if (body.birthday !== undefined) checkBirthday(body.birthday, this.deps.clock.now());

    const user = await this.requireUser(userUuid);
    const changes: Partial<repo.UserRow> = {};

    if (body.password !== undefined) {
      await throttle.check('password-account', userUuid);
      if (!(await verifySecret(user.password_hash, body.old_password!))) {
        await throttle.fail('password-account', userUuid);
        throw new ApiError('wrong-password', 'old_password does not match');
      }
      changes.password_hash = await hashSecret(body.password);
    }

    let confirmed: repo.AccountCodeTable | undefined;
    if (body.code !== undefined) {
      await throttle.check('code-account', userUuid);
      const row = await repo.findCode(this.db, hashSecretCode(body.code));
      if (
        row?.purpose !== 'email' ||
        row.user_uuid !== userUuid ||
        row.expires <= nowSeconds(this.deps.clock)
      ) {
        await throttle.fail('code-account', userUuid);
        throw new ApiError('wrong-code', 'unknown or expired e-mail code');
      }
      confirmed = row;
    }

    let emailCode: { email: string; code: string } | undefined;
    const emailRequested = body.email !== undefined && emailKey(body.email) !== user.email_key;
    if (emailRequested) {
      const recipient = emailKey(body.email!);
      await throttle.check('mail-account', userUuid);
      await throttle.check('mail-recipient', recipient);
      await throttle.fail('mail-account', userUuid);
      await throttle.fail('mail-recipient', recipient);
      // An address in use gets no code, and the answer is the same: it does not tell whether
      // the address is registered (the code that never comes is wrong-code).
      if (!(await repo.findUserByEmailKey(this.db, recipient))) {
        emailCode = { email: body.email!, code: newSecret(CODE_LENGTH) };
        // Sent before anything is stored: a mail that fails leaves no code behind.
        await mailer.send(body.email!, session.language, {
          kind: 'email-change',
          username: user.username,
          code: emailCode.code,
          validMinutes: CODE_LIFETIME / 60,
        });
      }
    }

    for (const field of TEXT_FIELDS) {
      const value = body[field];
      if (value !== undefined && value !== user[field]) changes[field] = value;
    }
    if (body.newsletter !== undefined && (body.newsletter ? 1 : 0) !== user.newsletter)
      changes.newsletter = body.newsletter ? 1 : 0;
    for (const field of REMOVABLE_FIELDS) {
      const value = body[field];
      if (value === undefined) continue;
      const stored = value === '' ? null : value;
      if (stored !== user[field]) changes[field] = stored;
    }
    if (body.pin !== undefined) changes.pin_hash = await hashSecret(body.pin);
    let addressChanged = false;
    if (given.length > 0) {
      for (const field of ADDRESS_FIELDS) {
        if (body[field] !== user[field]) {
          changes[field] = body[field]!;
          addressChanged = true;
        }
      }
      // A validated address that changes is no longer validated.
      if (addressChanged) changes.validation = 'incomplete';
    }

    const now = nowSeconds(this.deps.clock);
    await this.deps.writer.write(async (w) => {
      const { trx } = w;
      if (confirmed) {
        // A concurrent call may have used the code meanwhile: only one of them deletes it.
        if (!(await repo.deleteCode(trx, confirmed.code_hash)))
          throw new ApiError('wrong-code', 'unknown or expired e-mail code');
        const newEmail = confirmed.email!;
        const holder = await repo.findUserByEmailKey(trx, emailKey(newEmail));
        if (holder && holder.uuid !== userUuid)
          throw new ApiError('already-exist', 'e-mail address already in use');
        changes.email = newEmail;
        changes.email_key = emailKey(newEmail);
      }
      if (emailRequested) {
        // A newer request replaces older codes, whether or not it mailed one.
        await repo.deleteExpiredCodes(trx, now);
        await repo.deleteCodesOfUser(trx, userUuid, 'email');
      }
      if (emailCode) {
        await repo.insertCode(trx, {
          code_hash: hashSecretCode(emailCode.code),
          purpose: 'email',
          user_uuid: userUuid,
          email: emailCode.email,
          created: now,
          expires: now + CODE_LIFETIME,
        });
      }
      if (addressChanged) {
        const dropped = await repo.listIdcardJobsOfUser(trx, userUuid);
        await repo.deleteIdcardJobsOfUser(trx, userUuid);
        w.afterCommit(() => this.removeIdcardFiles(dropped));
      }
      if (Object.keys(changes).length > 0) await repo.updateUser(trx, userUuid, changes);
      if (Object.keys(changes).length > 0 || emailRequested) w.afterCommit(() => this.modified(userUuid));
    });
    if (confirmed) await throttle.clear('code-account', userUuid);
    if (body.password !== undefined) {
      await throttle.clear('password-account', userUuid);
      // Whoever knew the old password is out: every other session of the account ends.
      await this.deps.closeOtherSessions(userUuid, session.did);
    }
  }

  // --- profile picture ---

  private picturePath(userUuid: string): string {
    return path.join(this.deps.config.dataDir, 'picture', `${userUuid}.png`);
  }

  /**
   * POST /api/user/picture/{xxx}: any image sharp reads (PNG, JPEG, WebP, GIF, TIFF, AVIF, SVG),
   * stored re-encoded as PNG within 512 x 512 pixels, so that what is served is always a clean
   * image. too-large, malformed-file.
   */
  async setPicture(userUuid: string, body: unknown, declaredLength?: string): Promise<void> {
    await this.requireUser(userUuid);
    const data = await readUpload(body, this.deps.config.maxUploadSize, declaredLength);
    let png: Buffer;
    try {
      png = await sharp(data, { limitInputPixels: PICTURE_INPUT_PIXELS })
        .rotate()
        .resize(PICTURE_SIZE, PICTURE_SIZE, { fit: 'inside', withoutEnlargement: true })
        .png()
        .toBuffer();
    } catch {
      throw new ApiError('malformed-file', 'not an image');
    }
    await writeFileAtomically(this.picturePath(userUuid), png);
    await this.deps.writer.write(({ trx }) => repo.updateUser(trx, userUuid, { picture: 1 }));
    this.modified(userUuid);
  }

  /** GET /api/user/picture/{xxx}.png: the PNG, or 404 without a picture. */
  async getPicture(userUuid: string): Promise<Buffer> {
    const user = await repo.findUserByUuid(this.db, userUuid);
    if (user?.picture !== 1) throw new NotFoundError();
    try {
      return await fs.readFile(this.picturePath(userUuid));
    } catch {
      throw new NotFoundError();
    }
  }

  /** DELETE /api/user/picture: removes the picture; nothing to do without one. */
  async deletePicture(userUuid: string): Promise<void> {
    const user = await this.requireUser(userUuid);
    if (user.picture !== 1) return;
    await this.deps.writer.write(({ trx }) => repo.updateUser(trx, userUuid, { picture: 0 }));
    await fs.rm(this.picturePath(userUuid), { force: true });
    this.modified(userUuid);
  }

  // --- id card (address validation) ---

  private idcardPath(jobUuid: string): string {
    return path.join(this.deps.config.dataDir, 'idcard', `${jobUuid}.pdf`);
  }

  private async removeIdcardFiles(jobs: readonly repo.IdcardJobTable[]): Promise<void> {
    for (const job of jobs) await fs.rm(this.idcardPath(job.uuid), { force: true });
  }

  /**
   * POST /api/user/idcard/{xxx}.pdf: a PDF of the id card for the address validation. Needs the
   * address first (illegal-state); moves `validation` to checking and creates a job for the
   * internal idcardcheck API, replacing an earlier open one. too-large, malformed-file.
   */
  async uploadIdcard(userUuid: string, body: unknown, declaredLength?: string): Promise<void> {
    const user = await this.requireUser(userUuid);
    if (ADDRESS_FIELDS.some((field) => user[field] === null))
      throw new ApiError('illegal-state', 'set the address (POST /api/user) before the id card');
    const data = await readUpload(body, this.deps.config.maxUploadSize, declaredLength);
    if (data.subarray(0, 5).toString('latin1') !== '%PDF-') throw new ApiError('malformed-file', 'not a PDF');
    const job = { uuid: newUuid(), user_uuid: userUuid, created: nowSeconds(this.deps.clock) };
    await writeFileAtomically(this.idcardPath(job.uuid), data);
    try {
      await this.deps.writer.write(async (w) => {
        const replaced = await repo.listIdcardJobsOfUser(w.trx, userUuid);
        await repo.deleteIdcardJobsOfUser(w.trx, userUuid);
        await repo.insertIdcardJob(w.trx, job);
        await repo.updateUser(w.trx, userUuid, { validation: 'checking' });
        w.afterCommit(() => this.removeIdcardFiles(replaced));
        w.afterCommit(() => this.modified(userUuid));
      });
    } catch (error) {
      await fs.rm(this.idcardPath(job.uuid), { force: true });
      throw error;
    }
  }

  /** GET /api/idcardcheck: the open jobs, oldest first. */
  async listIdcardJobs(): Promise<string[]> {
    return (await repo.listIdcardJobs(this.db)).map((job) => job.uuid);
  }

  private async requireJob(jobUuid: string): Promise<repo.IdcardJobTable> {
    const job = await repo.findIdcardJob(this.db, jobUuid.toLowerCase());
    if (!job) throw new ApiError('wrong-job', 'no such job');
    return job;
  }

  /** GET /api/idcardcheck/{uuid}/address: what the id card is to be compared with. */
  async idcardAddress(jobUuid: string) {
    const job = await this.requireJob(jobUuid);
    const user = await repo.findUserByUuid(this.db, job.user_uuid);
    if (!user) throw new ApiError('wrong-job', 'no such job');
    return {
      firstname: user.firstname,
      lastname: user.lastname,
      zip_code: user.zip_code ?? '',
      town: user.town ?? '',
      street: user.street ?? '',
      house_number: user.house_number ?? '',
      country: user.country ?? '',
    };
  }

  /** GET /api/idcardcheck/{uuid}/idcard/{name}.pdf: the uploaded PDF, or 404. */
  async idcardDocument(jobUuid: string): Promise<Buffer> {
    const job = await repo.findIdcardJob(this.db, jobUuid.toLowerCase());
    if (!job) throw new NotFoundError();
    try {
      return await fs.readFile(this.idcardPath(job.uuid));
    } catch {
      throw new NotFoundError();
    }
  }

  /**
   * POST /api/idcardcheck/{uuid}: the result of the check becomes the user's `validation`; the
   * job is closed and the copy of the id card deleted (it is kept no longer than needed).
   */
  async setIdcardResult(jobUuid: string, validation: Validation): Promise<void> {
    const job = await this.requireJob(jobUuid);
    await this.deps.writer.write(async ({ trx }) => {
      if (!(await repo.deleteIdcardJob(trx, job.uuid))) throw new ApiError('wrong-job', 'no such job');
      await repo.updateUser(trx, job.user_uuid, { validation });
    });
    await this.removeIdcardFiles([job]);
    this.modified(job.user_uuid);
  }

  // --- account deletion ---

  /**
   * POST /api/user/delete: deletes the account for good, confirmed by the password
   * (wrong-password). Accounts a partner controls are deleted by the partner (access-denied).
   * The session that asked is closed.
   */
  async deleteAccount(session: SessionContext, userUuid: string, password: string): Promise<void> {
    const { throttle } = this.deps;
    const user = await this.requireUser(userUuid);
    if (user.partner_uuid) throw new ApiError('access-denied', 'the partner manages this account');
    await throttle.check('password-account', userUuid);
    if (!(await verifySecret(user.password_hash, password))) {
      await throttle.fail('password-account', userUuid);
      throw new ApiError('wrong-password', 'password does not match');
    }
    await this.removeAccount(userUuid);
    await throttle.clear('password-account', userUuid);
    await this.deps.closeSession(session);
  }

  /**
   * Deletes an account for good with its picture and id card copies (POST /api/user/delete,
   * and the partner's POST /api/partner/user `deleted`); the caller ends its sessions.
   */
  async removeAccount(userUuid: string): Promise<void> {
    const jobs = await repo.listIdcardJobsOfUser(this.db, userUuid);
    await this.deps.users.deleteUser(userUuid);
    await fs.rm(this.picturePath(userUuid), { force: true });
    await this.removeIdcardFiles(jobs);
  }
}
