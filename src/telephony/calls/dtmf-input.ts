/**
 * The caller's key presses on a call Zentrale answered (IVR, pin): digits are kept from the
 * moment the input opens, so keys pressed during an announcement count; a key press stops the
 * announcement playing (barge-in).
 */
import type { MediaLeg } from '../media-leg.js';

export type DtmfInputEvent = string | 'timeout' | 'ended';

export class DtmfInput {
  private readonly digits: string[] = [];
  private waiting: ((event: DtmfInputEvent) => void) | undefined;
  private closed = false;

  constructor(private readonly leg: MediaLeg) {
    leg.onDtmf((event) => {
      if (this.closed) return;
      leg.endpoint.stop();
      this.digits.push(event.digit);
      this.deliver();
    });
    leg.call.onEnd(() => this.deliver());
  }

  /** A digit was pressed and not read yet. */
  get pending(): boolean {
    return this.digits.length > 0;
  }

  /** The next digit; `timeout` after `seconds` (undefined: wait for ever); `ended` when the call ended. */
  next(seconds?: number): Promise<DtmfInputEvent> {
    const digit = this.digits.shift();
    if (digit !== undefined) return Promise.resolve(digit);
    if (this.leg.call.ended) return Promise.resolve('ended');
    return new Promise((resolve) => {
      const timer = seconds === undefined ? undefined : setTimeout(() => finish('timeout'), seconds * 1000);
      const finish = (event: DtmfInputEvent) => {
        clearTimeout(timer);
        this.waiting = undefined;
        resolve(event);
      };
      this.waiting = finish;
    });
  }

  /** Stops listening (the call goes on elsewhere, e.g. relayed to a target). */
  close(): void {
    this.closed = true;
  }

  private deliver(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    const digit = this.digits.shift();
    if (digit !== undefined) waiting(digit);
    else if (this.leg.call.ended) waiting('ended');
  }
}
