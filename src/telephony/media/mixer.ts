/**
 * The conference mixer (docs/decisions.md "Conferences"; ../shared/telephony-notes.md "Conferences", after
 * FreeSWITCH mod_conference): once per 20 ms frame it sums the talkers' audio, each scaled by
 * its volume_in, and gives each member the sum less its own contribution, scaled by its
 * volume_out and clipped. A member who is muted reaches no one; a deaf member hears silence.
 * Members who contribute nothing hear the same frame: it is computed once per frame.
 * Talk detection is by frame energy, smoothed, with a hangunder (frames of speech before talk
 * starts) and a hangover (frames of quiet before it ends); talk changes are reported at most
 * every 200 ms per member, the floor goes to the loudest talker. No sockets here: the media
 * worker feeds it (media-room.ts).
 */
import { performance } from 'node:perf_hooks';
import { encodeG711, type G711Type } from './g711.js';
import { FRAME_SAMPLES } from './sources.js';

/** Volume steps −4..4 and their factors, as FreeSWITCH applies them (telephony notes). */
export const VOLUME_FACTORS: Readonly<Record<number, number>> = {
  [-4]: 0.2,
  [-3]: 0.4,
  [-2]: 0.6,
  [-1]: 0.8,
  0: 1,
  1: 1.3,
  2: 2.3,
  3: 3.3,
  4: 4.3,
};

export function volumeFactor(step: number): number {
  return VOLUME_FACTORS[Math.max(-4, Math.min(4, Math.round(step)))]!;
}

/** Frames of speech before talk starts, frames of quiet before it ends (FreeSWITCH's defaults). */
export const HANGUNDER_FRAMES = 5;
export const HANGOVER_FRAMES = 40;
/** Mean absolute sample above which a frame counts as speech (FreeSWITCH's energy-level 100 is on this scale). */
export const ENERGY_THRESHOLD = 100;
/** Talk changes are reported at most this often per member (10 frames = 200 ms). */
export const TALK_REPORT_FRAMES = 10;
/**
 * Frames over which a member's queue is watched (200 ms): when it never fell below one whole
 * frame after the mix took its frame, that frame was only delay (the jitter never needed it),
 * and the oldest frame's worth is dropped. So a queue that start-up, a late frame or a burst of
 * packets left standing does not add 20 ms to what the member says for long. (A whole second
 * before the room waited for late frames, media-room.ts: then a frame standing was more often
 * the jitter buffer a member needed.)
 */
export const TRIM_WINDOW_FRAMES = 10;
/** After the room's clock moved, the queues are looked at over this many frames, not a whole window. */
export const REALIGN_WINDOW_FRAMES = 5;
/** Audio queued from a member beyond this is dropped, oldest first (bounds the delay). */
const MAX_QUEUED = FRAME_SAMPLES * 4;

export interface MemberSettings {
  readonly mute: boolean;
  readonly deaf: boolean;
  /** −4..4: how loud the others hear this member. */
  readonly volumeIn: number;
  /** −4..4: how loud this member hears the room. */
  readonly volumeOut: number;
}

export const DEFAULT_MEMBER: MemberSettings = { mute: false, deaf: false, volumeIn: 0, volumeOut: 0 };

export interface MixerEvents {
  talk?(member: number, talk: boolean): void;
  /** The loudest talker, or null when no one talks. */
  floor?(member: number | null): void;
  /**
   * A member's frame went into this mix `ms` after the packet that completed it arrived
   * (mixing-delay.ts); `behind`: it had been queued behind another frame of that member.
   */
  delay?(ms: number, behind: boolean): void;
  /** The room's tick ran `ms` after its time (media-room.ts's clock). */
  lateness?(ms: number): void;
  /** A mix took `ms` (media-room.ts times `mix`, without the sends after it). */
  mixed?(ms: number): void;
}

class Member {
  settings: MemberSettings;
  private queue = new Int16Array(MAX_QUEUED);
  private queued = 0;
  /** This frame's input, scaled by volume_in. */
  readonly input = new Int32Array(FRAME_SAMPLES);
  /** What this member hears this frame. */
  readonly output = new Int16Array(FRAME_SAMPLES);
  contributes = false;
  energy = 0;
  talking = false;
  private above = 0;
  private below = 0;
  reported = false;
  sinceReport = TALK_REPORT_FRAMES;
  /** The least the queue held after a take in this trim window, and the window's frames so far. */
  private standing = MAX_QUEUED;
  private watched = 0;
  /**
   * When each queued packet arrived, oldest first, by the sample count just past it (`pushed`
   * then): the mixing delay of a frame is from its last sample's arrival to its mix.
   */
  private readonly arrivedEnds: number[] = [];
  private readonly arrivedAt: number[] = [];
  /** Samples ever pushed, and ever removed from the head of the queue (taken or dropped). */
  private pushed = 0;
  private removed = 0;
  /** Takes after the last that found less than a frame (a short take), and takes from the short one before to it. */
  private sinceShort = Number.POSITIVE_INFINITY;
  /** When the last mix took this member's frame. */
  private lastTake = Number.NEGATIVE_INFINITY;
  private shortGap = Number.POSITIVE_INFINITY;

  constructor(settings: MemberSettings) {
    this.settings = settings;
  }

  get queuedSamples(): number {
    return this.queued;
  }

  push(samples: Int16Array, at: number): void {
    const n = samples.length;
    this.pushed += n;
    this.arrivedEnds.push(this.pushed);
    this.arrivedAt.push(at);
    if (n >= MAX_QUEUED) {
      this.queue.set(samples.subarray(n - MAX_QUEUED));
      this.removeHead(this.queued + n - MAX_QUEUED);
      this.queued = MAX_QUEUED;
      return;
    }
    if (this.queued + n > MAX_QUEUED) {
      const drop = this.queued + n - MAX_QUEUED;
      this.queue.copyWithin(0, drop, this.queued);
      this.queued -= drop;
      this.removeHead(drop);
    }
    this.queue.set(samples, this.queued);
    this.queued += n;
  }

  /** When the packet holding the next frame's last sample arrived, or undefined with no whole frame queued. */
  get frameArrivedAt(): number | undefined {
    if (this.queued < FRAME_SAMPLES) return undefined;
    const last = this.removed + FRAME_SAMPLES - 1;
    for (let i = 0; i < this.arrivedEnds.length; i++)
      if (this.arrivedEnds[i]! > last) return this.arrivedAt[i];
    return undefined;
  }

  /** `n` samples left the head of the queue: the packets wholly gone are forgotten. */
  private removeHead(n: number): void {
    this.removed += n;
    while (this.arrivedEnds.length > 0 && this.arrivedEnds[0]! <= this.removed) {
      this.arrivedEnds.shift();
      this.arrivedAt.shift();
    }
  }

  /**
   * Takes one frame of input (silence where none came), detects talk, scales it; tells `delay`
   * how long the frame waited (from the arrival of the packet that completed it to `now`).
   */
  take(now: number, delay: MixerEvents['delay']): void {
    this.dropLate();
    if (delay) {
      const arrived = this.frameArrivedAt;
      // In before the last mix and not taken by it: another frame of this member went first.
      if (arrived !== undefined) delay(now - arrived, arrived < this.lastTake);
      this.lastTake = now;
    }
    const n = Math.min(FRAME_SAMPLES, this.queued);
    const factor = volumeFactor(this.settings.volumeIn);
    // Volume 0 (most members) copies; a rounding multiply per sample was a share of the worker's time.
    const unity = factor === 1;
    const queue = this.queue;
    const input = this.input;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const sample = queue[i]!;
      sum += sample < 0 ? -sample : sample;
      input[i] = unity ? sample : Math.round(sample * factor);
    }
    if (n < FRAME_SAMPLES) input.fill(0, n);
    this.queue.copyWithin(0, n, this.queued);
    this.queued -= n;
    this.removeHead(n);
    if (n < FRAME_SAMPLES) {
      this.shortGap = this.sinceShort + 1;
      this.sinceShort = 0;
    } else this.sinceShort++;
    this.trim();
    this.detect(sum / FRAME_SAMPLES);
    this.contributes = this.talking && !this.settings.mute;
  }

  /**
   * The frame of the last mix came late (the mix went without it) and the next one is in too:
   * the late one goes, as a phone's jitter buffer drops a packet past its playout, rather than
   * making everything the member says wait a frame longer until `trim`. Only for a one-off: a
   * member short again within TRIM_WINDOW_FRAMES (packets that come in bunches) keeps the frame
   * queued, its jitter buffer, as before.
   */
  private dropLate(): void {
    if (this.sinceShort !== 0 || this.shortGap <= TRIM_WINDOW_FRAMES || this.queued < 2 * FRAME_SAMPLES)
      return;
    this.dropFrame();
  }

  /** The oldest queued frame goes. */
  private dropFrame(): void {
    this.queue.copyWithin(0, FRAME_SAMPLES, this.queued);
    this.queued -= FRAME_SAMPLES;
    this.removeHead(FRAME_SAMPLES);
  }

  /** Drops a frame that stood in the queue for a whole window (TRIM_WINDOW_FRAMES). */
  private trim(): void {
    this.standing = Math.min(this.standing, this.queued);
    if (++this.watched < TRIM_WINDOW_FRAMES) return;
    if (this.standing >= FRAME_SAMPLES) this.dropFrame();
    this.standing = MAX_QUEUED;
    this.watched = 0;
  }

  /** The room's clock moved: a frame the move left standing goes after REALIGN_WINDOW_FRAMES. */
  watchSoon(): void {
    this.standing = MAX_QUEUED;
    this.watched = Math.max(this.watched, TRIM_WINDOW_FRAMES - REALIGN_WINDOW_FRAMES);
  }

  /** Energy talk detection: smoothed 0.2 old / 0.8 new, hangunder and hangover in frames. */
  detect(level: number): void {
    this.energy = this.energy * 0.2 + level * 0.8;
    if (this.energy >= ENERGY_THRESHOLD) {
      this.below = 0;
      if (!this.talking && ++this.above >= HANGUNDER_FRAMES) this.talking = true;
    } else {
      this.above = 0;
      if (this.talking && ++this.below >= HANGOVER_FRAMES) this.talking = false;
    }
  }
}

function clip(value: number): number {
  return value > 32767 ? 32767 : value < -32768 ? -32768 : value;
}

export class Mixer {
  private readonly members = new Map<number, Member>();
  private readonly sum = new Int32Array(FRAME_SAMPLES);
  /** The whole room (every contribution and what plays to all), clipped: recordings and non-talkers. */
  readonly room = new Int16Array(FRAME_SAMPLES);
  private readonly shared = new Map<number, Int16Array>();
  /** The shared frames encoded, per volume_out step and law: one encoding for all who hear them. */
  private readonly sharedEncoded = new Map<number, Uint8Array>();
  private readonly played = new Int16Array(FRAME_SAMPLES);
  private floorMember: number | null = null;
  /** Sources heard by every member (enter and leave tones, announcements), summed into the room. */
  readonly sources = new Set<{ read(frame: Int16Array): boolean; end(): void }>();
  /** Told of each frame of the room's mix (recordings). */
  readonly listeners = new Set<(frame: Int16Array) => void>();

  constructor(private readonly events: MixerEvents = {}) {}

  get size(): number {
    return this.members.size;
  }

  get floor(): number | null {
    return this.floorMember;
  }

  add(id: number, settings: MemberSettings = DEFAULT_MEMBER): void {
    this.members.set(id, new Member({ ...settings }));
  }

  remove(id: number): void {
    this.members.delete(id);
    if (this.floorMember === id) {
      this.floorMember = null;
      this.events.floor?.(null);
    }
  }

  update(id: number, settings: Partial<MemberSettings>): void {
    const member = this.members.get(id);
    if (member) member.settings = { ...member.settings, ...settings };
  }

  talking(id: number): boolean {
    return this.members.get(id)?.talking ?? false;
  }

  /** The room's clock moved (room-phase.ts): one frame was shorter or longer. */
  realigned(): void {
    for (const member of this.members.values()) member.watchSoon();
  }

  /** Whether a whole frame of the member's audio is queued for the next mix. */
  hasFrame(id: number): boolean {
    return (this.members.get(id)?.queuedSamples ?? 0) >= FRAME_SAMPLES;
  }

  /** Audio a member sent (decoded 8 kHz samples), arrived at `at` (`performance.now()`); copied. */
  push(id: number, samples: Int16Array, at = performance.now()): void {
    this.members.get(id)?.push(samples, at);
  }

  /** What `id` hears this frame (valid until the next `mix`). */
  output(id: number): Int16Array | undefined {
    return this.members.get(id)?.output;
  }

  /**
   * What `id` hears this frame, encoded once for every member who hears the same (members who
   * add nothing to the frame, as FreeSWITCH shares its mix); undefined for a member who hears
   * its own N−1 mix or is deaf (its endpoint encodes it).
   */
  encoded(id: number, payloadType: G711Type): Uint8Array | undefined {
    const member = this.members.get(id);
    if (!member || member.contributes || member.settings.deaf) return undefined;
    const key = member.settings.volumeOut * 16 + payloadType;
    let frame = this.sharedEncoded.get(key);
    if (!frame) {
      frame = new Uint8Array(FRAME_SAMPLES);
      encodeG711(member.output, payloadType, frame);
      this.sharedEncoded.set(key, frame);
    }
    return frame;
  }

  /** One 20 ms frame, mixed at `now` (`performance.now()`): every member's input taken, the room summed, each member's output made. */
  mix(now = performance.now()): void {
    const sum = this.sum;
    const delay = this.events.delay;
    sum.fill(0);
    for (const member of this.members.values()) {
      member.take(now, delay);
      if (!member.contributes) continue;
      const input = member.input;
      for (let i = 0; i < FRAME_SAMPLES; i++) sum[i]! += input[i]!;
    }
    for (const source of this.sources) {
      this.played.fill(0);
      if (!source.read(this.played)) {
        this.sources.delete(source);
        source.end();
        continue;
      }
      for (let i = 0; i < FRAME_SAMPLES; i++) sum[i]! += this.played[i]!;
    }
    for (let i = 0; i < FRAME_SAMPLES; i++) this.room[i] = clip(sum[i]!);
    this.shared.clear();
    this.sharedEncoded.clear();
    for (const member of this.members.values()) this.hear(member);
    for (const listener of this.listeners) listener(this.room);
    this.report();
  }

  private hear(member: Member): void {
    const out = member.output;
    if (member.settings.deaf) {
      out.fill(0);
      return;
    }
    const factor = volumeFactor(member.settings.volumeOut);
    if (!member.contributes) {
      // Everyone who adds nothing hears the same frame: made once per volume_out.
      const step = member.settings.volumeOut;
      let frame = this.shared.get(step);
      if (!frame) {
        frame = new Int16Array(FRAME_SAMPLES);
        if (factor === 1) frame.set(this.room);
        else for (let i = 0; i < FRAME_SAMPLES; i++) frame[i] = clip(Math.round(this.room[i]! * factor));
        this.shared.set(step, frame);
      }
      out.set(frame);
      return;
    }
    const sum = this.sum;
    const own = member.input;
    if (factor === 1) for (let i = 0; i < FRAME_SAMPLES; i++) out[i] = clip(sum[i]! - own[i]!);
    else for (let i = 0; i < FRAME_SAMPLES; i++) out[i] = clip(Math.round(clip(sum[i]! - own[i]!) * factor));
  }

  /** Talk changes at most every TALK_REPORT_FRAMES per member; the floor to the loudest talker. */
  private report(): void {
    let loudest: Member | undefined;
    let loudestId: number | null = null;
    for (const [id, member] of this.members) {
      member.sinceReport++;
      if (member.talking !== member.reported && member.sinceReport >= TALK_REPORT_FRAMES) {
        member.reported = member.talking;
        member.sinceReport = 0;
        this.events.talk?.(id, member.talking);
      }
      if (member.contributes && (!loudest || member.energy > loudest.energy)) {
        loudest = member;
        loudestId = id;
      }
    }
    // The floor stays with its holder while it talks, and moves only to someone louder.
    const holder = this.floorMember === null ? undefined : this.members.get(this.floorMember);
    if (holder?.contributes && loudest && loudest.energy <= holder.energy * 1.5) return;
    if (loudestId === null && holder?.contributes) return;
    if (loudestId !== this.floorMember) {
      this.floorMember = loudestId;
      this.events.floor?.(loudestId);
    }
  }
}
