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
  /** Stamps every timer set and every `nextDelay` asked: only the newest answer sets the timer. */
  private latest = 0;

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
    await this.scheduleNext();
  }

  private schedule(delay: number): void {
    this.latest += 1;
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
    if (again) this.schedule(0);
    else await this.scheduleNext();
  }

  /**
   * Sets the timer as `nextDelay` says, unless a timer was set or `nextDelay` asked again
   * meanwhile (a poke's timer stands; a later answer knows more).
   */
  private async scheduleNext(): Promise<void> {
    this.latest += 1;
    const stamp = this.latest;
    const delay = await this.nextDelay();
    if (!this.isStopped && this.latest === stamp) this.schedule(delay);
  }
}
