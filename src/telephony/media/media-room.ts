/**
 * A conference room in the media worker (docs/decisions.md "Conferences"): a Mixer (mixer.ts) on a
 * 20 ms clock of the room's own, its members' endpoints feeding it what their peers send and
 * playing what each should hear. Each tick mixes and then sends every member its frame, so no
 * frame waits a tick between the mix and its send; the clock moves to just after the members'
 * arrivals (room-phase.ts). Tones and announcements to the whole room are mixed in; a
 * recording takes the room's mix.
 */
import { performance } from 'node:perf_hooks';
import { MediaClock, phaseOf } from './clock.js';
import type { MediaEndpoint, PlayResult } from './media-endpoint.js';
import type { MediaEngine } from './media-engine.js';
import { DEFAULT_MEMBER, type MemberSettings, Mixer, type MixerEvents } from './mixer.js';
import { Recorder } from './recorder.js';
import { bestPhase, frameDue, LATE_WAIT_MS, lateEdges, longestWait } from './room-phase.js';
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
  /** Gives the endpoint back to the engine's clock; undefined when another room ticks it. */
  readonly giveBack: (() => void) | undefined;
  /** Phases (ms in the 20 ms) of the frames that arrived in this alignment window. */
  arrivals: number[];
  /** When its last frame arrived (`performance.now()`). */
  lastArrival: number;
  readonly off: () => void;
}

/** Ticks between two looks at the members' arrivals (one second). */
export const ALIGN_FRAMES = 50;
/** The clock moves only when that shortens the longest wait by more than this (each move makes one frame shorter or longer). */
const ALIGN_GAIN_MS = 2;

export class MediaRoom {
  readonly mixer: Mixer;
  private readonly members = new Map<number, Joined>();
  private readonly clock: MediaClock;
  private readonly recorders = new Set<Recorder>();
  private ticks = 0;
  private deadline = 0;
  private waiting: NodeJS.Timeout | undefined;
  private closed = false;

  /**
   * @param now the room's time (ms, `performance.now()`'s scale); a test gives its own, so that
   * what it asserts does not hang on how long a loaded machine took between two lines.
   */
  constructor(
    private readonly engine: MediaEngine,
    private readonly events: MixerEvents = {},
    private readonly now: () => number = () => performance.now(),
  ) {
    this.mixer = new Mixer(events);
    this.clock = new MediaClock(events.lateness);
    this.clock.add(this);
  }

  /** The phase the room mixes at (ms in each 20 ms of `performance.now()`); undefined once closed. */
  get phase(): number | undefined {
    return this.clock.phase;
  }

  /** @internal one 20 ms frame: the mix, then each member's frame sent (once the frames due are in). */
  tick(): void {
    // A clock catching up after a stall ticks again at once: the frame still waiting goes first.
    if (this.waiting) this.mixNow();
    const now = this.now();
    this.deadline = now + LATE_WAIT_MS;
    // A member's frame due within LATE_WAIT_MS of the tick and not in yet: a frame its jitter made
    // late by a millisecond or two would otherwise miss the mix and stand a whole frame in the
    // queue (20 ms more for all the member says, until the queue is trimmed). The mix then runs
    // from the arrival of the last frame due (join's onAudio), or at the deadline.
    if (this.anyFrameDue(now)) this.waiting = setTimeout(() => this.mixNow(), LATE_WAIT_MS);
    else this.mixNow();
  }

  /** A frame arrived: while the room waits, it mixes once no other frame is due. */
  private arrived(): void {
    if (this.waiting && !this.anyFrameDue(this.now())) this.mixNow();
  }

  private anyFrameDue(now: number): boolean {
    for (const [id, member] of this.members) {
      if (frameDue(now, this.deadline, member.lastArrival, this.mixer.hasFrame(id))) return true;
    }
    return false;
  }

  private mixNow(): void {
    clearTimeout(this.waiting);
    this.waiting = undefined;
    if (this.closed) return;
    const start = this.now();
    this.mixer.mix(start);
    this.events.mixed?.(this.now() - start);
    for (const member of this.members.values()) {
      if (!member.giveBack || member.endpoint.isClosed) continue;
      try {
        member.endpoint.tick();
      } catch {
        // One endpoint's failure must not stop the others' audio (as on the engine's clock).
      }
    }
    if (++this.ticks % ALIGN_FRAMES === 0) this.align();
  }

  /**
   * Moves the clock to just after the members' arrivals when that shortens the longest wait by
   * more than ALIGN_GAIN_MS, and forgets the arrivals for the next window.
   */
  private align(): void {
    const joined = [...this.members.values()];
    const edges = lateEdges(joined.map((member) => member.arrivals));
    for (const member of joined) member.arrivals = [];
    const best = bestPhase(edges);
    const current = this.clock.phase;
    if (best === undefined || current === undefined) return;
    if (longestWait(edges, current) - longestWait(edges, best) <= ALIGN_GAIN_MS) return;
    this.clock.align(best);
    this.mixer.realigned();
  }

  /** Joins an endpoint under `id` (its number in the events); what it played before stops. */
  join(id: number, endpoint: MediaEndpoint, settings: MemberSettings = DEFAULT_MEMBER): void {
    if (this.closed || endpoint.isClosed) return;
    this.leave(id);
    this.mixer.add(id, settings);
    const offAudio = endpoint.onAudio((samples) => {
      const at = this.now();
      const member = this.members.get(id);
      if (member) {
        member.lastArrival = at;
        if (member.arrivals.length < ALIGN_FRAMES * 4) member.arrivals.push(phaseOf(at));
      }
      this.mixer.push(id, samples, at);
      this.arrived();
    });
    void endpoint.play(new MemberSource(this.mixer, id));
    this.members.set(id, {
      endpoint,
      giveBack: this.engine.lend(endpoint),
      arrivals: [],
      lastArrival: Number.NEGATIVE_INFINITY,
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
    member.giveBack?.();
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
    this.clock.remove(this);
    clearTimeout(this.waiting);
    for (const recorder of [...this.recorders]) recorder.stop('closed');
  }
}
