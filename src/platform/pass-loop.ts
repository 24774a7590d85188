/**
 * The background loop of the database-driven runners (rule engine, ipquality): one pass at a
 * time on this node; a poke during a pass runs another right after it; otherwise the next pass
 * waits as long as `nextDelay` says (the earliest due row, at most a poll interval, since other
 * nodes change rows too). A failed pass is handed to `onError` and the loop goes on.
 */
export class PassLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private isStopped = true;

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

  private schedule(delay: number): void {
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
    this.schedule(again ? 0 : await this.nextDelay());
  }
}
