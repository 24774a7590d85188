/**
 * Sign-up (spec "Session and sign-up": /api/signup/verification and POST /api/signup/user).
 * Three ways to a verification key:
 * - user sign-up by captcha: the key goes to the e-mail address, proving it;
 * - partner-controlled (partner session): the key, and the UUID the user will get, go back to
 *   the partner; the user later carries the partner;
 * - hardware code (registered by the operator, at most 5 verifications each): the key goes back.
 * The key, used with POST /api/signup/user, creates the user and authenticates the session.
 * Keys live 7 days, are stored hashed, and wrong ones are throttled per session.
 */

import type { SessionContext } from '../../platform/access.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, nowSeconds } from '../../platform/ids.js';
import type { Mailer } from '../../platform/mail.js';
import type { Throttle } from '../../platform/throttle/throttle.js';
import type { HardwareCodeService } from '../hardware/index.js';
import type { PartnerService } from '../partner/index.js';
import type { SessionService } from '../session/index.js';
import {
  hashSecretCode,
  KEY_LENGTH,
  newSecret,
  type UserService,
  VERIFICATION_LIFETIME,
} from '../user/index.js';
import type { CaptchaService, PendingCaptcha } from './captcha.service.js';
import * as repo from './signup.repository.js';
import type { PostSignupUserBody, PostVerificationBody } from './signup.schema.js';

export interface SignupServiceDeps {
  db: Db;
  /** Every write goes through it (the platform's unit of work). */
  writer: Writer;
  /** The wall clock of the stamps and expiries. */
  clock: Clock;
  users: UserService;
  partners: PartnerService;
  sessions: Pick<SessionService, 'authenticateUser'>;
  hardwareCodes: Pick<HardwareCodeService, 'useHardwareCode'>;
  mailer: Mailer;
  captchas: CaptchaService;
  throttle: Throttle;
}

/** Live keys one partner may hold (exceeded-limit beyond): partner requests need no captcha. */
export const PARTNER_VERIFICATION_MAX = 1000;

/** `info` serialized: the spec's `^.{1,10000}$`. */
const INFO_MAX = 10_000;

export interface VerificationAnswer {
  verification?: string;
  uuid?: string;
  info?: unknown;
}

export interface VerificationDescription {
  email?: string;
  partner?: string;
  uuid?: string;
  info?: unknown;
}

function serializeInfo(info: unknown): string | null {
  if (info === undefined) return null;
  const text = JSON.stringify(info);
  if ([...text].length > INFO_MAX)
    throw new ApiError('wrong-syntax', `bad info (over ${INFO_MAX} characters)`);
  return text;
}

export class SignupService {
  constructor(private readonly deps: SignupServiceDeps) {}

  /** POST /api/signup/verification. `pending` is the captcha this call took from the session. */
  async requestVerification(
    session: SessionContext,
    body: PostVerificationBody,
    pending: PendingCaptcha,
  ): Promise<VerificationAnswer> {
    const info = serializeInfo(body.info);
    if (session.kind === 'partner') return this.partnerVerification(session, body.email, info);
    if (body.email === undefined) throw new ApiError('missing-element', 'missing email');
    const code = body['hardware-code'];
    if (code !== undefined) return this.hardwareVerification(session, body.email, code, info);
    if (body.captcha === undefined) throw new ApiError('missing-element', 'missing captcha');

    await this.deps.captchas.verify(session, pending, body.captcha);
    await this.checkEmailFree(body.email);
    const key = newSecret(KEY_LENGTH);
    // Sent before anything is stored: a mail that fails leaves no key behind.
    await this.deps.mailer.send(body.email, session.language, {
      kind: 'signup-verification',
      key,
      validDays: VERIFICATION_LIFETIME / 86_400,
    });
    await this.deps.writer.write((w) => this.store(w, key, 'email', body.email!, null, info));
    return {};
  }

  private async partnerVerification(
    session: SessionContext,
    email: string | undefined,
    info: string | null,
  ): Promise<VerificationAnswer> {
    if (email !== undefined) await this.checkEmailFree(email);
    const partner = session.partnerUuid ?? null;
    if (
      partner &&
      (await repo.countPartnerVerifications(this.deps.db, partner, nowSeconds(this.deps.clock))) >=
        PARTNER_VERIFICATION_MAX
    )
      throw new ApiError('exceeded-limit', `at most ${PARTNER_VERIFICATION_MAX} unused keys per partner`);
    const key = newSecret(KEY_LENGTH);
    const row = await this.deps.writer.write((w) =>
      this.store(w, key, 'partner', email ?? null, partner, info),
    );
    const answer: VerificationAnswer = { verification: key, uuid: row.user_uuid };
    if (info !== null) answer.info = JSON.parse(info);
    return answer;
  }

  private async hardwareVerification(
    session: SessionContext,
    email: string,
    code: string,
    info: string | null,
  ): Promise<VerificationAnswer> {
    const { throttle, hardwareCodes } = this.deps;
    await throttle.check('code-session', session.did);
    await this.checkEmailFree(email);
    const key = newSecret(KEY_LENGTH);
    try {
      // The use of the code counts only together with the key it bought.
      await this.deps.writer.write(async (w) => {
        await hardwareCodes.useHardwareCode(w, code);
        await this.store(w, key, 'hardware', email, null, info);
      });
    } catch (error) {
      if (error instanceof ApiError && error.status === 'wrong-code')
        await throttle.fail('code-session', session.did);
      throw error;
    }
    return { verification: key };
  }

  private async checkEmailFree(email: string): Promise<void> {
    if (await this.deps.users.findUserByLogin({ email }))
      throw new ApiError('already-exist', 'e-mail address already in use');
  }

  private async store(
    w: UnitOfWork,
    key: string,
    kind: repo.VerificationKind,
    email: string | null,
    partnerUuid: string | null,
    info: string | null,
  ): Promise<repo.VerificationTable> {
    const now = nowSeconds(this.deps.clock);
    const row: repo.VerificationTable = {
      key_hash: hashSecretCode(key),
      kind,
      user_uuid: newUuid(),
      email,
      partner_uuid: partnerUuid,
      info,
      created: now,
      expires: now + VERIFICATION_LIFETIME,
    };
    await repo.deleteExpiredVerifications(w.trx, now);
    await repo.insertVerification(w.trx, row);
    return row;
  }

  /** The live verification for a key; unknown-verification (counted) otherwise. */
  private async findVerification(session: SessionContext, key: string): Promise<repo.VerificationTable> {
    const { throttle, db } = this.deps;
    await throttle.check('key-session', session.did);
    const row = await repo.findVerification(db, hashSecretCode(key));
    if (row && row.expires > nowSeconds(this.deps.clock)) return row;
    await throttle.fail('key-session', session.did);
    throw new ApiError('unknown-verification', 'unknown or expired verification key');
  }

  /** GET /api/signup/verification/{verification}. */
  async describeVerification(session: SessionContext, key: string): Promise<VerificationDescription> {
    const row = await this.findVerification(session, key);
    const answer: VerificationDescription = {};
    if (row.email !== null) answer.email = row.email;
    if (row.kind === 'partner') {
      answer.uuid = row.user_uuid;
      const partner = row.partner_uuid ? await this.deps.partners.findPartner(row.partner_uuid) : undefined;
      if (partner) answer.partner = partner.name;
    }
    if (row.info !== null) answer.info = JSON.parse(row.info);
    return answer;
  }

  /** DELETE /api/signup/verification/{verification}. */
  async deleteVerification(session: SessionContext, key: string): Promise<void> {
    const row = await this.findVerification(session, key);
    if (!(await this.deps.writer.write(({ trx }) => repo.deleteVerification(trx, row.key_hash))))
      throw new ApiError('unknown-verification', 'unknown or expired verification key');
  }

  /**
   * POST /api/signup/user: creates the user (with everything a new user owns, through the
   * user-created hooks), deletes the key, and authenticates the session.
   */
  async signupUser(session: SessionContext, body: PostSignupUserBody): Promise<void> {
    const { users, sessions } = this.deps;
    if (session.kind !== 'anonymous') throw new ApiError('already-auth', 'the session is authenticated');
    const row = await this.findVerification(session, body.verification);
    const email = row.email ?? body.email;
    if (email === undefined) throw new ApiError('missing-element', 'missing email');
    const user = await this.deps.writer.write(async (w) => {
      // A concurrent sign-up may have used the key meanwhile: only one of them deletes it.
      if (!(await repo.deleteVerification(w.trx, row.key_hash)))
        throw new ApiError('unknown-verification', 'unknown or expired verification key');
      return users.createUserIn(w, {
        uuid: row.user_uuid,
        username: body.username,
        password: body.password,
        firstname: body.firstname,
        lastname: body.lastname,
        email,
        displayName: body.display_name,
        countryCode: body.country_code,
        language: body.language ?? session.language,
        newsletter: body.newsletter,
        partnerUuid: row.partner_uuid,
      });
    });
    await sessions.authenticateUser(session, user.uuid);
  }
}
