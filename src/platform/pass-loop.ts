/**
 * The background loop of the database-driven runners (rule engine, ipquality, push delivery):
 * one pass at a time on this node; a poke during a pass runs another right after it; otherwise
 * the next pass waits as long as `nextDelay` says (the earliest due row, at most a poll
 * interval, since other nodes change rows too). A failed pass is handed to `onError` and the
 * loop goes on.
 */
export class PassLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private isStopped = true;
  /** Counts the timers set, so that an answer of `nextDelay` older than the last timer is dropped. */
  private scheduled = 0;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly nextDelay: () => Promise<number>,
    private readonly onError: (error: unknown) => void,
  ) {}

  get stopped(): boolean {
    return this.isStopped;
  }

  start(): void {
    this.isStopped = false;
    this.schedule(0);
  }

  /** Takes no further pass from the moment it is called; resolves when the pass under way ends. */
  async stop(): Promise<void> {
    this.isStopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** A pass soon (something changed on this node). */
  poke(): void {
    if (!this.isStopped) this.schedule(0);
  }

  /**
   * The next pass may be due sooner than planned (work was added that the last `nextDelay` did
   * not see): asks `nextDelay` again, unless a pass is under way (its end asks anyway).
   */
  async reschedule(): Promise<void> {
    if (this.isStopped || this.running) return;
    const before = this.scheduled;
    const delay = await this.nextDelay();
    if (this.isStopped || this.running || this.scheduled !== before) return;
    this.schedule(delay);
  }

  private schedule(delay: number): void {
    this.scheduled += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), delay);
    this.timer.unref?.();
  }

  private async run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass().catch(this.onError);
    await this.running;
    this.running = undefined;
    if (this.isStopped) return;
    const again = this.again;
    this.again = false;
    if (again) {
      this.schedule(0);
      return;
    }
    const before = this.scheduled;
    const delay = await this.nextDelay();
    // A poke while `nextDelay` ran set its own timer: that one stands.
    if (!this.isStopped && this.scheduled === before) this.schedule(delay);
  }
}
