/**
 * Throttling of wrong answers (captchas, verification keys, recovery and e-mail codes, old
 * passwords, logins), and of mails sent on a user's request (counted like wrong answers). Keys and codes are long enough that guessing is hopeless anyway; the
 * throttle makes trying expensive and keeps brute force out of the logs. A subject (a session's
 * did, a user's UUID, a client address) that gave its scope's limit of wrong answers within
 * `THROTTLE_WINDOW` seconds gets resource-throttle until the window has passed.
 *
 * Logins (README "How the API behaves") are counted per client address (a hard limit: only
 * that address is refused) and per account (a back-off, not a lock: beyond the limit the
 * account takes one attempt per back-off period, so that nobody can lock a user out by
 * guessing); an address that logged in to the account before is a known client, exempt from
 * the account's back-off.
 */
import type { Clock } from '../clock.js';
import type { Db } from '../database/database.js';
import type { Writer } from '../database/unit-of-work.js';
import { ApiError } from '../errors.js';
import { nowSeconds } from '../ids.js';
import * as repo from './throttle.repository.js';

/** What is being counted: per session, per account or per client address. */
export type ThrottleScope =
  | 'captcha-session'
  | 'key-session'
  | 'code-session'
  | 'code-account'
  | 'password-account'
  | 'login-account'
  | 'login-address'
  | 'mail-account'
  | 'mail-recipient';

export const THROTTLE_LIMIT = 10;
export const THROTTLE_WINDOW = 15 * 60;
/** Wrong logins one client address may give per window (several users behind one NAT). */
export const LOGIN_ADDRESS_LIMIT = 50;
/** Mails with codes one account may ask for, and one address may receive, per window. */
export const MAIL_LIMIT = 5;
/** The first back-off after the limit; it doubles with every further wrong answer. */
export const BACK_OFF_START = 15;
/** How long an address that logged in to an account stays a known client of it. */
export const KNOWN_CLIENT_LIFETIME = 30 * 24 * 3600;

const KNOWN = 'known-client';

function limitOf(scope: ThrottleScope): number {
  if (scope === 'login-address') return LOGIN_ADDRESS_LIMIT;
  if (scope === 'mail-account' || scope === 'mail-recipient') return MAIL_LIMIT;
  return THROTTLE_LIMIT;
}

/** Seconds an account over its limit waits after its last wrong answer: 15, 30, 60 ... 900. */
export function backOffAfter(failures: number): number {
  return Math.min(BACK_OFF_START * 2 ** Math.max(0, failures - THROTTLE_LIMIT), THROTTLE_WINDOW);
}

function throttled(): ApiError {
  return new ApiError('resource-throttle', 'too many wrong answers, try again later');
}

export class Throttle {
  constructor(
    private readonly writer: Writer,
    /** The wall clock the windows and back-offs are read against. */
    private readonly clock: Clock,
  ) {}

  private get db(): Db {
    return this.writer.db;
  }

  /** resource-throttle while the subject is over its limit. */
  async check(scope: ThrottleScope, subject: string): Promise<void> {
    const row = await repo.findThrottle(this.db, scope, subject);
    if (row && row.window_start > nowSeconds(this.clock) - THROTTLE_WINDOW && row.failures >= limitOf(scope))
      throw throttled();
  }

  /**
   * resource-throttle while a subject over its limit is within its back-off after its last wrong
   * answer (counted with `fail(scope, subject, { sliding: true })`); later attempts are let through.
   */
  async checkBackOff(scope: ThrottleScope, subject: string): Promise<void> {
    const row = await repo.findThrottle(this.db, scope, subject);
    if (
      row &&
      row.failures >= limitOf(scope) &&
      nowSeconds(this.clock) < row.window_start + backOffAfter(row.failures)
    )
      throw throttled();
  }

  /**
   * Counts one wrong answer, in a write of its own. Call it outside any write: the count must
   * stay when the caller's write rolls back. `sliding` restarts the window at every wrong answer
   * (back-off scopes: the window is the time since the last one).
   */
  async fail(scope: ThrottleScope, subject: string, options: { sliding?: boolean } = {}): Promise<void> {
    const now = nowSeconds(this.clock);
    await this.writer.write(async (w) => {
      const row = await repo.findThrottle(w.trx, scope, subject);
      const fresh = !row || row.window_start <= now - THROTTLE_WINDOW;
      await repo.saveThrottle(w.trx, {
        scope,
        subject,
        window_start: fresh || options.sliding ? now : row.window_start,
        failures: fresh ? 1 : row.failures + 1,
      });
      if (fresh) {
        await repo.deleteStaleThrottles(w.trx, now - THROTTLE_WINDOW, KNOWN);
        await repo.deleteStaleScope(w.trx, KNOWN, now - KNOWN_CLIENT_LIFETIME);
      }
    });
  }

  /** Forgets the wrong answers of a subject that has just proved itself (every login: one statement). */
  async clear(scope: ThrottleScope, subject: string): Promise<void> {
    await this.writer.writeStatement((w) => repo.deleteThrottle(w.trx, scope, subject));
  }

  /** Remembers a client (e.g. account and address) that proved itself, for KNOWN_CLIENT_LIFETIME. */
  async rememberClient(client: string): Promise<void> {
    await this.writer.writeStatement((w) =>
      repo.saveThrottle(w.trx, {
        scope: KNOWN,
        subject: client,
        window_start: nowSeconds(this.clock),
        failures: 0,
      }),
    );
  }

  async isKnownClient(client: string): Promise<boolean> {
    const row = await repo.findThrottle(this.db, KNOWN, client);
    return row !== undefined && row.window_start > nowSeconds(this.clock) - KNOWN_CLIENT_LIFETIME;
  }
}
