/**
 * Throttling of wrong answers (captchas, verification keys, recovery and e-mail codes, old
 * passwords). Keys and codes are long enough that guessing is hopeless anyway; the throttle
 * makes trying expensive and keeps brute force out of the logs. A subject (a session's did or
 * a user's UUID) that gave `LIMIT` wrong answers within `WINDOW` seconds gets
 * resource-throttle until the window has passed.
 */
import type { Db } from '../database/database.js';
import { ApiError } from '../errors.js';
import { nowSeconds } from '../ids.js';
import * as repo from './throttle.repository.js';

/** What is being counted: per session or per account. */
export type ThrottleScope =
  | 'captcha-session'
  | 'key-session'
  | 'code-session'
  | 'code-account'
  | 'password-account'
  | 'login';

export const THROTTLE_LIMIT = 10;
export const THROTTLE_WINDOW = 15 * 60;

export class Throttle {
  constructor(private readonly db: Db) {}

  /** resource-throttle while the subject is over its limit. */
  async check(scope: ThrottleScope, subject: string): Promise<void> {
    const row = await repo.findThrottle(this.db, scope, subject);
    if (row && row.window_start > nowSeconds() - THROTTLE_WINDOW && row.failures >= THROTTLE_LIMIT) {
      throw new ApiError('resource-throttle', 'too many wrong answers, try again later');
    }
  }

  /** Counts one wrong answer. Call it outside any transaction: the count must stay. */
  async fail(scope: ThrottleScope, subject: string): Promise<void> {
    const now = nowSeconds();
    const row = await repo.findThrottle(this.db, scope, subject);
    const fresh = !row || row.window_start <= now - THROTTLE_WINDOW;
    await repo.saveThrottle(this.db, {
      scope,
      subject,
      window_start: fresh ? now : row.window_start,
      failures: fresh ? 1 : row.failures + 1,
    });
    if (fresh) await repo.deleteStaleThrottles(this.db, now - THROTTLE_WINDOW);
  }

  /** Forgets the wrong answers of a subject that has just proved itself. */
  async clear(scope: ThrottleScope, subject: string): Promise<void> {
    await repo.deleteThrottle(this.db, scope, subject);
  }
}
