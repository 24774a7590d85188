/**
 * A conference room in the media worker (docs/decisions.md "Conferences"): a Mixer (mixer.ts) run on the
 * engine's 20 ms clock, its members' endpoints feeding it what their peers send and playing
 * what each should hear. Tones and announcements to the whole room are mixed in; a recording
 * takes the room's mix.
 */
import type { MediaEndpoint, PlayResult } from './media-endpoint.js';
import type { MediaEngine } from './media-engine.js';
import { DEFAULT_MEMBER, type MemberSettings, Mixer, type MixerEvents } from './mixer.js';
import { Recorder } from './recorder.js';
import { type AudioSource, FRAME_SAMPLES } from './sources.js';

/** What a member's endpoint plays: its share of the mix, frame by frame, until it leaves. */
class MemberSource implements AudioSource {
  constructor(
    private readonly mixer: Mixer,
    private readonly id: number,
  ) {}

  read(frame: Int16Array): boolean {
    const output = this.mixer.output(this.id);
    if (!output) return false;
    frame.set(output);
    return true;
  }

  encoded(payloadType: 0 | 8): Uint8Array | undefined {
    return this.mixer.encoded(this.id, payloadType);
  }
}

interface Joined {
  readonly endpoint: MediaEndpoint;
  readonly off: () => void;
}

export class MediaRoom {
  readonly mixer: Mixer;
  private readonly members = new Map<number, Joined>();
  private readonly offClock: () => void;
  private readonly recorders = new Set<Recorder>();
  private closed = false;

  constructor(engine: MediaEngine, events: MixerEvents = {}) {
    this.mixer = new Mixer(events);
    this.offClock = engine.onClock({ tick: () => this.mixer.mix() });
  }

  /** Joins an endpoint under `id` (its number in the events); what it played before stops. */
  join(id: number, endpoint: MediaEndpoint, settings: MemberSettings = DEFAULT_MEMBER): void {
    if (this.closed || endpoint.isClosed) return;
    this.leave(id);
    this.mixer.add(id, settings);
    const offAudio = endpoint.onAudio((samples) => this.mixer.push(id, samples));
    void endpoint.play(new MemberSource(this.mixer, id));
    this.members.set(id, {
      endpoint,
      off: () => {
        offAudio();
        endpoint.stop();
      },
    });
  }

  leave(id: number): void {
    const member = this.members.get(id);
    if (!member) return;
    this.members.delete(id);
    this.mixer.remove(id);
    member.off();
  }

  update(id: number, settings: Partial<MemberSettings>): void {
    this.mixer.update(id, settings);
  }

  /** Plays `source` to every member (mixed over the room); resolves when it ends or the room closes. */
  play(source: AudioSource): Promise<PlayResult> {
    if (this.closed) return Promise.resolve('closed');
    return new Promise((resolve) => {
      this.mixer.sources.add({ read: (frame) => source.read(frame), end: () => resolve('done') });
    });
  }

  /** Stops what plays to the room (music while alone, once a second member joins). */
  stop(): void {
    for (const source of this.mixer.sources) source.end();
    this.mixer.sources.clear();
  }

  /** Records the room's mix, up to `maxSeconds`. */
  record(maxSeconds: number): Recorder {
    let timestamp = 0;
    const listener = (frame: Int16Array) => {
      recorder.write(0, timestamp, frame);
      timestamp += FRAME_SAMPLES;
    };
    const recorder = new Recorder(maxSeconds, () => {
      this.mixer.listeners.delete(listener);
      this.recorders.delete(recorder);
    });
    if (this.closed) recorder.stop('closed');
    else {
      this.mixer.listeners.add(listener);
      this.recorders.add(recorder);
    }
    return recorder;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const id of [...this.members.keys()]) this.leave(id);
    for (const source of this.mixer.sources) source.end();
    this.mixer.sources.clear();
    this.offClock();
    for (const recorder of [...this.recorders]) recorder.stop('closed');
  }
}
