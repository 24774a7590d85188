/**
 * Password recovery (spec "Session and sign-up": POST /api/password/recovery and
 * POST /api/password). A recovery code goes to the account's e-mail address; with it, an
 * unauthenticated session sets a new password and becomes authenticated. Codes live one hour,
 * are single use (a newer one replaces an older one) and stored hashed; wrong codes are
 * throttled per session and per account. A reset ends the account's other sessions.
 */
import type { SessionContext } from '../../platform/access.js';
import { ApiError } from '../../platform/errors.js';
import type { Mailer } from '../../platform/mail.js';
import type { Throttle } from '../../platform/throttle/throttle.js';
import type { SessionService } from '../session/index.js';
import { CODE_LENGTH, CODE_LIFETIME, newSecret, type UserService } from '../user/index.js';
import type { CaptchaService, PendingCaptcha } from './captcha.service.js';
import type { PostPasswordBody, PostRecoveryBody } from './signup.schema.js';

export interface RecoveryServiceDeps {
  users: UserService;
  sessions: Pick<SessionService, 'authenticateUser' | 'closeUserSessions'>;
  mailer: Mailer;
  captchas: CaptchaService;
  throttle: Throttle;
}

function requireLogin(body: { username?: string | undefined; email?: string | undefined }): void {
  if (body.username === undefined && body.email === undefined)
    throw new ApiError('missing-element', 'missing username');
}

export class RecoveryService {
  constructor(private readonly deps: RecoveryServiceDeps) {}

  /** POST /api/password/recovery. `pending` is the captcha this call took from the session. */
  async requestRecovery(
    session: SessionContext,
    body: PostRecoveryBody,
    pending: PendingCaptcha,
  ): Promise<void> {
    const { users, mailer, captchas } = this.deps;
    requireLogin(body);
    await captchas.verify(session, pending, body.captcha);
    const user = await users.findUserByLogin(body);
    if (!user || user.disabled) throw new ApiError('wrong-username', 'no such user');
    if (!user.email) throw new ApiError('email-failure', 'the account has no e-mail address');
    const code = newSecret(CODE_LENGTH);
    // Sent before the code is stored: a mail that fails leaves no code behind.
    await mailer.send(user.email, session.language, {
      kind: 'password-recovery',
      username: user.username,
      code,
      validMinutes: CODE_LIFETIME / 60,
    });
    await users.storeCode('recovery', user.uuid, code, CODE_LIFETIME);
  }

  /**
   * A recovery code for a user, without mail (the partner API hands it to the partner). It
   * replaces the user's earlier recovery codes.
   */
  async issueRecoveryCode(userUuid: string): Promise<string> {
    const code = newSecret(CODE_LENGTH);
    await this.deps.users.storeCode('recovery', userUuid, code, CODE_LIFETIME);
    return code;
  }

  /**
   * POST /api/password: wrong-username also for a wrong, expired or used code, so that the
   * answer does not tell which one was wrong. Returns the partner of the user, if any.
   */
  async resetPassword(session: SessionContext, body: PostPasswordBody): Promise<{ partner?: string }> {
    const { users, sessions, throttle } = this.deps;
    if (session.kind !== 'anonymous') throw new ApiError('already-auth', 'the session is authenticated');
    requireLogin(body);
    await throttle.check('code-session', session.did);
    const user = await users.findUserByLogin(body);
    if (user) await throttle.check('code-account', user.uuid);
    const ok =
      user && !user.disabled && (await users.resetPasswordWithCode(user.uuid, body.code, body.password));
    if (!user || !ok) {
      await throttle.fail('code-session', session.did);
      if (user) await throttle.fail('code-account', user.uuid);
      throw new ApiError('wrong-username', 'unknown user or wrong code');
    }
    await throttle.clear('code-account', user.uuid);
    // Whoever knew the old password is out: the account's sessions end on every node.
    await sessions.closeUserSessions(user.uuid);
    await sessions.authenticateUser(session, user.uuid);
    return session.partnerName ? { partner: session.partnerName } : {};
  }
}
