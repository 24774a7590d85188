/**
 * Recording what the far end sends (voicemail, spec "Recording"): received frames are placed
 * by RTP timestamp, so reordered packets land where they belong and lost ones leave silence;
 * a new SSRC or a timestamp jump continues at the current end. The buffer grows in steps up
 * to the maximum length and never beyond it.
 */
import { fromInt16, isSilent } from '../../platform/content/audio.js';
import { writeWav } from '../../platform/content/wav.js';
import { SAMPLE_RATE } from './sources.js';

export interface Recording {
  samples: Int16Array;
  durationMs: number;
  /** Only silence was heard (the spec's `empty`). */
  empty: boolean;
  /** Why it stopped. */
  reason: 'stopped' | 'max-length' | 'closed';
}

export function recordingToWav(recording: Recording): Uint8Array {
  return writeWav(recording.samples, SAMPLE_RATE);
}

/** Jumps further than this (in samples) are a new timeline, not a gap. */
const MAX_GAP = SAMPLE_RATE * 2;

export class Recorder {
  private buffer: Int16Array;
  private length = 0;
  private ssrc: number | undefined;
  private base = 0;
  private baseTimestamp = 0;
  private finished: Recording | undefined;
  private resolveDone!: (recording: Recording) => void;
  readonly done: Promise<Recording>;
  private readonly max: number;

  constructor(
    maxSeconds: number,
    private readonly onFinish: (recorder: Recorder) => void,
  ) {
    this.max = Math.max(1, Math.round(maxSeconds * SAMPLE_RATE));
    this.buffer = new Int16Array(Math.min(this.max, SAMPLE_RATE * 10));
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /** @internal decoded samples of one packet. */
  write(ssrc: number, timestamp: number, samples: Int16Array): void {
    if (this.finished) return;
    if (this.ssrc !== ssrc) {
      this.ssrc = ssrc;
      this.base = this.length;
      this.baseTimestamp = timestamp;
    }
    let offset = (timestamp - this.baseTimestamp) | 0;
    if (offset < -MAX_GAP || offset > MAX_GAP + (this.length - this.base)) {
      this.base = this.length;
      this.baseTimestamp = timestamp;
      offset = 0;
    }
    const at = this.base + offset;
    if (at < 0) return;
    const end = Math.min(at + samples.length, this.max);
    if (end > this.buffer.length) {
      const grown = new Int16Array(Math.min(this.max, Math.max(end, this.buffer.length * 2)));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    if (end > at) this.buffer.set(samples.subarray(0, end - at), at);
    this.length = Math.max(this.length, end);
    if (this.length >= this.max) this.stop('max-length');
  }

  stop(reason: Recording['reason'] = 'stopped'): Recording {
    if (this.finished) return this.finished;
    const samples = this.buffer.slice(0, this.length);
    this.buffer = new Int16Array(0);
    this.finished = {
      samples,
      durationMs: Math.round((samples.length * 1000) / SAMPLE_RATE),
      empty: isSilent(fromInt16(samples), SAMPLE_RATE),
      reason,
    };
    this.onFinish(this);
    this.resolveDone(this.finished);
    return this.finished;
  }
}
