/**
 * The fax step's media half (decisions.md "Fax over the network"): a FaxSession on a
 * media endpoint, fed the far end's 160-sample frames and sending its own on the endpoint's 20 ms
 * clock. RTP frames lost on the way (a gap in sequence and timestamp) go to rxFillin, so that
 * spandsp keeps its modem timing; a frame arriving after its successor was heard is dropped.
 */
import { FAX_FRAME_SAMPLES, type FaxResult, FaxSession, type FaxSessionOptions } from './fax-session.js';

/** The longest gap filled in (1 s); a longer one is a new stream (hold, re-INVITE), not loss. */
const MAX_FILLIN_SAMPLES = 8000;
/** How often (frames) the pages done are looked at for progress: once a second. */
const PROGRESS_FRAMES = 50;

/** A fax running on an endpoint: `done` settles at phase E or when stopped or closed. */
export interface FaxHandle {
  readonly done: Promise<FaxResult>;
  /** Ends the fax now (the call ended); `done` settles with what was transferred so far. */
  stop(): void;
}

export class FaxLink implements FaxHandle {
  readonly done: Promise<FaxResult>;
  private readonly session: FaxSession;
  private ssrc: number | undefined;
  private sequence = 0;
  private timestamp = 0;
  private length = 0;
  private frames = 0;
  private pages = 0;
  private closed = false;

  constructor(
    options: FaxSessionOptions,
    private readonly onPage?: (pages: number) => void,
    onEnd?: () => void,
  ) {
    this.session = new FaxSession(options);
    this.done = this.session.done.then((result) => {
      // Phase E ran inside rx/tx: free spandsp once that call returned.
      queueMicrotask(() => this.close());
      onEnd?.();
      return result;
    });
  }

  /** One received audio packet's samples, with its RTP header's numbers. */
  receive(ssrc: number, sequence: number, timestamp: number, samples: Int16Array): void {
    if (this.closed) return;
    if (this.ssrc === ssrc) {
      const step = (sequence - this.sequence) & 0xffff;
      // A duplicate or a late frame: its time was filled in already.
      if (step === 0 || step >= 0x8000) return;
      const missing = ((timestamp - this.timestamp) >>> 0) - this.length;
      if (step > 1 && missing > 0 && missing <= MAX_FILLIN_SAMPLES) {
        for (let left = missing; left > 0; left -= FAX_FRAME_SAMPLES)
          this.session.rxFillin(Math.min(left, FAX_FRAME_SAMPLES));
      }
    }
    this.ssrc = ssrc;
    this.sequence = sequence;
    this.timestamp = timestamp;
    this.length = samples.length;
    for (let at = 0; at < samples.length && !this.closed; at += FAX_FRAME_SAMPLES)
      this.session.rx(samples.subarray(at, Math.min(samples.length, at + FAX_FRAME_SAMPLES)));
  }

  /** Fills `frame` with the next 160 samples to send. */
  read(frame: Int16Array): void {
    if (this.closed) {
      frame.fill(0);
      return;
    }
    frame.set(this.session.tx(frame.length));
    if (++this.frames % PROGRESS_FRAMES === 0 && this.onPage && !this.closed) {
      const pages = this.session.pages();
      if (pages > this.pages) {
        this.pages = pages;
        this.onPage(pages);
      }
    }
  }

  stop(): void {
    if (!this.closed) this.session.terminate();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.session.close();
  }
}
