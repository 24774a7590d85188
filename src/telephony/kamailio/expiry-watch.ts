/**
 * The watch on registrations' expiry (decisions.md "The call engine", registrations): Kamailio
 * reports a registration that changes, not one that expires without unregistering, so the engine
 * keeps the latest known expiry of each user registered through this node and, when the earliest
 * has passed (plus a grace for the table's lag), asks for that user's registrations again.
 */
import type { Clock } from '../../platform/clock.js';

export class ExpiryWatch {
  /** Latest known expiry (ms) per user. */
  private readonly watched = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (ms). */
  private at = Number.POSITIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    /** How long after an expiry the watch looks (write-back: the table's lag). */
    private readonly grace: () => number,
    private readonly expired: (user: string) => void,
  ) {}

  /** The user's latest expiry (ms); the timer is set again only for an earlier one. */
  set(user: string, expires: number): void {
    this.watched.set(user, expires);
    if (expires + this.grace() < this.at) this.schedule();
  }

  delete(user: string): void {
    this.watched.delete(user);
  }

  users(): IterableIterator<string> {
    return this.watched.keys();
  }

  /** Sets several expiries (found at start), then the timer once. */
  setAll(entries: Iterable<readonly [string, number]>): void {
    for (const [user, expires] of entries) this.watched.set(user, expires);
    this.schedule();
  }

  clear(): void {
    this.cancel();
    this.watched.clear();
  }

  private cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.at = Number.POSITIVE_INFINITY;
  }

  private schedule(): void {
    this.cancel();
    if (this.watched.size === 0) return;
    let next = Number.POSITIVE_INFINITY;
    for (const expires of this.watched.values()) if (expires < next) next = expires;
    // At most once a second, however many registrations expire together.
    const wait = Math.max(1000, next - this.clock.now() + this.grace());
    this.at = this.clock.now() + wait;
    this.timer = setTimeout(() => {
      this.cancel();
      const now = this.clock.now();
      for (const [user, expires] of this.watched) {
        if (expires <= now) {
          this.watched.delete(user);
          this.expired(user);
        }
      }
      this.schedule();
    }, wait);
    this.timer.unref();
  }
}
