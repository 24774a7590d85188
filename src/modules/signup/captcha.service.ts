/**
 * Captchas of spec "Session and sign-up" (GET /api/signup/captcha/{xxx}.png): each session has
 * at most one pending captcha, replaced by every image served and used up by the call that
 * answers it, right or wrong. Only a hash of the answer is stored, salted with the session.
 *
 * CAPTCHA_TEST_ANSWER (decisions.md; automated tests only) is accepted in place of the text of
 * the pending captcha; without a pending captcha it is wrong like any other answer.
 */
import { createHash } from 'node:crypto';
import type { SessionContext } from '../../platform/access.js';
import { normaliseCaptchaAnswer, renderCaptcha } from '../../platform/captcha.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { nowSeconds } from '../../platform/ids.js';
import type { Throttle } from '../../platform/throttle/throttle.js';
import * as repo from './signup.repository.js';

/** A captcha stays answerable this long after it was served. */
export const CAPTCHA_LIFETIME = 10 * 60;

/** The captcha a call took from its session (undefined: none was pending). */
export type PendingCaptcha = repo.CaptchaTable | undefined;

function hashAnswer(did: string, answer: string): string {
  return createHash('sha256')
    .update(`${did}\n${normaliseCaptchaAnswer(answer)}`)
    .digest('hex');
}

export class CaptchaService {
  constructor(
    private readonly writer: Writer,
    private readonly config: Pick<Config, 'captchaTestAnswer'>,
    private readonly throttle: Throttle,
    private readonly clock: Clock,
    private readonly render: () => Promise<{ answer: string; png: Buffer }> = renderCaptcha,
  ) {}

  /** A new captcha image for the session, replacing its pending one. */
  async issue(session: SessionContext): Promise<Buffer> {
    // A session that keeps answering wrong gets no new captchas for a while (HTTP 404).
    await this.throttle.check('captcha-session', session.did);
    const { answer, png } = await this.render();
    await this.writer.writeStatement((w) =>
      repo.saveCaptcha(w.trx, {
        session_did: session.did,
        answer_hash: hashAnswer(session.did, answer),
        expires: nowSeconds(this.clock) + CAPTCHA_LIFETIME,
      }),
    );
    return png;
  }

  /** Takes the session's pending captcha away: every call that may answer one resets it. */
  take(session: SessionContext): Promise<PendingCaptcha> {
    return this.writer.writeStatement((w) => repo.takeCaptcha(w.trx, session.did));
  }

  /** wrong-captcha unless `answer` solves the captcha taken; resource-throttle after many wrong ones. */
  async verify(session: SessionContext, pending: PendingCaptcha, answer: string): Promise<void> {
    await this.throttle.check('captcha-session', session.did);
    const live = pending !== undefined && pending.expires > nowSeconds(this.clock);
    const testAnswer = this.config.captchaTestAnswer;
    const right =
      live &&
      ((testAnswer !== undefined && answer === testAnswer) ||
        hashAnswer(session.did, answer) === pending.answer_hash);
    if (right) return;
    await this.throttle.fail('captcha-session', session.did);
    throw new ApiError('wrong-captcha', live ? 'wrong captcha' : 'no captcha requested');
  }
}
