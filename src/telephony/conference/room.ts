/**
 * A live conference room of this node (docs/decisions.md "Conferences"): its
 * members are call sessions whose media endpoints the media worker mixes (media/mixer.ts); the
 * room holds their flags (mute, deaf, volume_in, volume_out, talk, floor), the moderator's lock
 * and mute-all, the maximum of members, enter and leave tones and the recording of the mix, and
 * tells its listeners (the API area, later) when it starts and stops and what changed.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, systemClock } from '../../platform/clock.js';
import { nowSeconds } from '../../platform/ids.js';
import type { Call } from '../calls/call.js';
import {
  type AudioSource,
  type Recording,
  ToneSource,
  type WorkerEndpoint,
  type WorkerMediaEngine,
} from '../media/index.js';
import type { RecordingHandle } from '../media/media-endpoint.js';
import type { MemberSettings } from '../media/mixer.js';
import { WorkerRoom } from '../media/worker-room.js';
import { ConferenceError } from './errors.js';

/** A member as the spec's events name it. */
export interface MemberView {
  /** The member's call (its UUID). */
  readonly call: string;
  readonly mute: boolean;
  readonly deaf: boolean;
  readonly talk: boolean;
  readonly floor: boolean;
  readonly volume_in: number;
  readonly volume_out: number;
}

/** What a moderator changes of a member. */
export type MemberChange = Partial<Pick<MemberView, 'mute' | 'deaf' | 'volume_in' | 'volume_out'>>;

export interface RoomSettings {
  /** DTMF digits a caller enters before joining (3 tries); none: no PIN. */
  readonly pin?: string;
  /** Members at most; none: no limit. */
  readonly maxMembers?: number;
  /** Heard by the room when a member enters, leaves; null: nothing (default: short tones). */
  readonly enter?: AudioSource | null;
  readonly leave?: AudioSource | null;
  /** Heard by a member while it is alone in the room (each time anew); none: silence. */
  readonly music?: () => AudioSource;
  /** Seconds of the mix to record from the first member on; none: no recording. */
  readonly recordSeconds?: number;
}

export interface RoomListeners {
  /** The first member joined. */
  started?(room: Room): void;
  /** The last member left; the recording of the mix when the room recorded. */
  stopped?(room: Room, recording: Recording | undefined): void;
  joined?(room: Room, member: MemberView): void;
  left?(room: Room, member: MemberView): void;
  /** Changed fields only (talk and floor included). */
  updated?(room: Room, call: string, changed: Partial<MemberView>): void;
}

interface Member {
  view: MemberView;
  readonly endpoint: WorkerEndpoint;
  /** When it joined (seconds since epoch; the API lists members in this order). */
  readonly since: number;
  /** Ends the member's wait in the room (left, kicked, room closed). */
  readonly gone: () => void;
}

const VOLUMES = new Set([-4, -3, -2, -1, 0, 1, 2, 3, 4]);

/** Short tones when nothing else is set: rising on entry, falling on leave. */
const enterTone = () => new ToneSource(880, { durationMs: 150, amplitude: 0.15 });
const leaveTone = () => new ToneSource(440, { durationMs: 150, amplitude: 0.15 });

export class Room {
  private readonly members = new Map<string, Member>();
  private media: WorkerRoom | undefined;
  private recording: RecordingHandle | undefined;
  locked = false;
  private readonly moderators = new Set<string>();
  private musicPlaying = false;
  /** The member given the floor by a moderator; while set, the loudest talker does not take it. */
  private floorGiven: string | undefined;
  /** The member the mixer last gave the floor (the loudest talker), for when a given floor ends. */
  private floorHeard: WorkerEndpoint | null = null;
  /**
   * The capability another node presents to send a caller on into this room (its home): the
   * room's members on other nodes reach it with it (docs/decisions.md "Conferences", several nodes).
   */
  readonly token = randomBytes(24).toString('base64url');

  constructor(
    readonly id: string,
    private readonly engine: WorkerMediaEngine,
    readonly settings: RoomSettings = {},
    private readonly listeners: RoomListeners = {},
    private readonly clock: Clock = systemClock,
  ) {}

  get size(): number {
    return this.members.size;
  }

  list(): MemberView[] {
    return [...this.members.values()].map((member) => member.view);
  }

  /** The members with the time each joined (seconds since epoch), in joining order. */
  entries(): { view: MemberView; since: number }[] {
    return [...this.members.values()].map(({ view, since }) => ({ view, since }));
  }

  /** Marks member `call` a moderator (its PIN or its user said so): mute-all leaves it be. */
  moderate(call: string): void {
    if (this.members.has(call)) this.moderators.add(call);
  }

  /** Whether member `call` is a moderator (moderate). */
  isModerator(call: string): boolean {
    return this.moderators.has(call);
  }

  /** Whether a new member may join now (not locked, not full). */
  admits(): ConferenceError | undefined {
    if (this.locked) return new ConferenceError('locked', `room ${this.id} is locked`);
    const max = this.settings.maxMembers;
    if (max !== undefined && this.members.size >= max)
      return new ConferenceError('full', `room ${this.id} is full`);
    return undefined;
  }

  /**
   * Joins the answered call's endpoint to the mix; resolves when the member is gone (left,
   * kicked, the call or the room ended). Throws locked, full or illegal-state.
   */
  join(call: Call, settings: MemberChange = {}): Promise<void> {
    const refused = this.admits();
    if (refused) throw refused;
    const endpoint = call.leg?.endpoint as WorkerEndpoint | undefined;
    if (!endpoint || endpoint.isClosed || call.ended || this.members.has(call.uuid))
      throw new ConferenceError('illegal-state', `call ${call.uuid} cannot join room ${this.id}`);
    const first = this.members.size === 0;
    const media = this.open();
    let gone!: () => void;
    const left = new Promise<void>((resolve) => {
      gone = resolve;
    });
    const view: MemberView = {
      call: call.uuid,
      mute: settings.mute ?? false,
      deaf: settings.deaf ?? false,
      talk: false,
      floor: false,
      volume_in: settings.volume_in ?? 0,
      volume_out: settings.volume_out ?? 0,
    };
    this.members.set(call.uuid, { view, endpoint, gone, since: nowSeconds(this.clock) });
    media.join(endpoint, mixerSettings(view));
    call.onCleanup(() => this.leave(call.uuid));
    // The member's CDR is a conference record naming the room (its id is the conference's UUID).
    call.record?.conference(this.id);
    if (first) this.listeners.started?.(this);
    this.listeners.joined?.(this, view);
    this.music();
    this.announce(this.settings.enter === undefined ? enterTone() : this.settings.enter);
    return left;
  }

  private open(): WorkerRoom {
    if (this.media && !this.media.isClosed) return this.media;
    const media = new WorkerRoom(this.engine, {
      talk: (endpoint, talk) => this.flag(endpoint, { talk }),
      floor: (endpoint) => {
        this.floorHeard = endpoint;
        if (this.floorGiven === undefined) this.floorTo((member) => member.endpoint === endpoint);
      },
      lost: () => {
        for (const call of [...this.members.keys()]) this.leave(call);
      },
    });
    this.media = media;
    if (this.settings.recordSeconds) this.recording = media.record(this.settings.recordSeconds);
    return media;
  }

  /** The floor is the one member `holds` picks (none: no one's); tells the members that changed. */
  private floorTo(holds: (member: Member) => boolean): void {
    for (const member of this.members.values()) {
      const floor = holds(member);
      if (member.view.floor !== floor) this.change(member, { floor });
    }
  }

  /**
   * Gives the floor to member `call` (FreeSWITCH's vid-floor/floor lock), or, with false, takes a
   * given floor back to the loudest talker. Member gone: no-member.
   */
  floor(call: string, give: boolean): void {
    if (!this.members.has(call))
      throw new ConferenceError('no-member', `no member ${call} in room ${this.id}`);
    if (give) {
      this.floorGiven = call;
      this.floorTo((member) => member.view.call === call);
    } else if (this.floorGiven === call) this.releaseFloor();
  }

  private releaseFloor(): void {
    this.floorGiven = undefined;
    const heard = this.floorHeard;
    this.floorTo((member) => heard !== null && member.endpoint === heard);
  }

  /** The member's view; undefined when `call` is no member (left, or never joined). */
  member(call: string): MemberView | undefined {
    return this.members.get(call)?.view;
  }

  /** The moderator's lock: a locked room refuses new members (locked); its members stay. */
  lock(locked: boolean): void {
    this.locked = locked;
  }

  private flag(endpoint: WorkerEndpoint, changed: Partial<MemberView>): void {
    for (const member of this.members.values())
      if (member.endpoint === endpoint) this.change(member, changed);
  }

  private change(member: Member, changed: Partial<MemberView>): void {
    member.view = { ...member.view, ...changed };
    this.listeners.updated?.(this, member.view.call, changed);
  }

  /** Music while one member is alone; stopped when a second joins. */
  private music(): void {
    const media = this.media;
    const music = this.settings.music;
    if (!media || media.isClosed || !music) return;
    if (this.members.size === 1 && !this.musicPlaying) {
      this.musicPlaying = true;
      void media.play(music()).then(() => {
        this.musicPlaying = false;
      });
    } else if (this.members.size > 1 && this.musicPlaying) {
      this.musicPlaying = false;
      media.stop();
    }
  }

  private announce(source: AudioSource | null): void {
    if (source && this.media && !this.media.isClosed) void this.media.play(source);
  }

  /** The member leaves (its call goes on; a kick hangs it up). No member: nothing. */
  leave(call: string): void {
    const member = this.members.get(call);
    if (!member) return;
    this.members.delete(call);
    this.moderators.delete(call);
    this.media?.leave(member.endpoint);
    if (this.floorHeard === member.endpoint) this.floorHeard = null;
    if (this.floorGiven === call) this.releaseFloor();
    member.gone();
    this.listeners.left?.(this, member.view);
    if (this.members.size > 0) {
      this.music();
      this.announce(this.settings.leave === undefined ? leaveTone() : this.settings.leave);
      return;
    }
    void this.stop();
  }

  private async stop(): Promise<void> {
    const media = this.media;
    const recording = this.recording;
    this.media = undefined;
    this.recording = undefined;
    recording?.stop();
    media?.close();
    this.listeners.stopped?.(this, recording ? await recording.done : undefined);
  }

  /** Changes a member's flags (volumes −4..4: else wrong-volume; gone: no-member); tells the changed fields. */
  control(call: string, change: MemberChange): void {
    const member = this.members.get(call);
    if (!member) throw new ConferenceError('no-member', `no member ${call} in room ${this.id}`);
    for (const volume of [change.volume_in, change.volume_out])
      if (volume !== undefined && !VOLUMES.has(volume))
        throw new ConferenceError('wrong-volume', `volume ${volume} is not one of −4..4`);
    const changed: Partial<MemberView> = {};
    for (const key of ['mute', 'deaf', 'volume_in', 'volume_out'] as const) {
      const value = change[key];
      if (value !== undefined && value !== member.view[key]) Object.assign(changed, { [key]: value });
    }
    if (Object.keys(changed).length === 0) return;
    this.change(member, changed);
    this.media?.update(member.endpoint, mixerSettings(member.view));
  }

  /** Removes a member and hangs up its call (as FreeSWITCH's kick). */
  kick(call: Call): void {
    if (!this.members.has(call.uuid))
      throw new ConferenceError('no-member', `no member ${call.uuid} in room ${this.id}`);
    this.leave(call.uuid);
    void call.hangup().catch(() => {});
  }

  /** The moderator's mute-all: every member but `except` and the moderators muted, or all unmuted. */
  muteAll(mute: boolean, except?: string): void {
    for (const member of [...this.members.values()])
      if (member.view.call !== except && !this.moderators.has(member.view.call))
        this.control(member.view.call, { mute });
  }

  /** Ends the room: every member leaves (their calls go on to their next step). */
  close(): void {
    for (const call of [...this.members.keys()]) this.leave(call);
  }
}

function mixerSettings(view: MemberView): MemberSettings {
  return { mute: view.mute, deaf: view.deaf, volumeIn: view.volume_in, volumeOut: view.volume_out };
}

/** The live rooms of this node by id (a room lives on one node: docs/decisions.md "Conferences"). */
export class ConferenceRooms {
  private readonly rooms = new Map<string, Room>();

  constructor(
    private readonly engine: WorkerMediaEngine,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The live room `id`, made with `settings` and `listeners` when it is not live yet. */
  open(id: string, settings: RoomSettings = {}, listeners: RoomListeners = {}): Room {
    let room = this.rooms.get(id);
    if (!room) {
      room = new Room(
        id,
        this.engine,
        settings,
        {
          ...listeners,
          stopped: (stopped, recording) => {
            if (this.rooms.get(id) === stopped) this.rooms.delete(id);
            listeners.stopped?.(stopped, recording);
          },
        },
        this.clock,
      );
      this.rooms.set(id, room);
    }
    return room;
  }

  get(id: string): Room | undefined {
    return this.rooms.get(id);
  }

  /** The calls (UUIDs) of every member of every live room. */
  memberCalls(): string[] {
    return [...this.rooms.values()].flatMap((room) => room.list().map((view) => view.call));
  }

  get size(): number {
    return this.rooms.size;
  }
}
