/**
 * A conference room in the media worker, driven from the main thread (docs/decisions.md "Conferences"; the
 * worker's side is media-room.ts): members are WorkerEndpoints joined by id, their settings
 * cross as data, talk and floor changes come back as events.
 */
import type { PlayResult, RecordingHandle } from './media-endpoint.js';
import type { MemberSettings } from './mixer.js';
import type { RoomEvent } from './room-protocol.js';
import { type AudioSource, sourceSpec } from './sources.js';
import { EMPTY_RECORDING, type WorkerEndpoint, type WorkerMediaEngine } from './worker-engine.js';

export interface RoomListeners {
  /** A member's talk flag changed (at most every 200 ms per member). */
  talk?(endpoint: WorkerEndpoint, talk: boolean): void;
  /** The floor moved to the loudest talker, or to no one. */
  floor?(endpoint: WorkerEndpoint | null): void;
  /** The media worker ended: the room's media is gone. */
  lost?(): void;
}

export class WorkerRoom {
  private readonly members = new Map<number, WorkerEndpoint>();
  private closed = false;
  readonly id: number;

  constructor(
    private readonly engine: WorkerMediaEngine,
    private readonly listeners: RoomListeners = {},
  ) {
    this.id = engine.newId();
    engine.rooms.set(this.id, this);
    engine.send({ op: 'room-open', room: this.id });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  join(endpoint: WorkerEndpoint, settings: MemberSettings): void {
    if (this.closed || endpoint.isClosed) return;
    this.members.set(endpoint.id, endpoint);
    this.engine.send({ op: 'room-join', room: this.id, endpoint: endpoint.id, settings });
  }

  update(endpoint: WorkerEndpoint, settings: Partial<MemberSettings>): void {
    if (!this.closed) this.engine.send({ op: 'room-update', room: this.id, endpoint: endpoint.id, settings });
  }

  leave(endpoint: WorkerEndpoint): void {
    if (!this.members.delete(endpoint.id) || this.closed) return;
    this.engine.send({ op: 'room-leave', room: this.id, endpoint: endpoint.id });
  }

  /** Plays a tone or PCM to every member, over the room. */
  async play(source: AudioSource): Promise<PlayResult> {
    const spec = sourceSpec(source);
    if (!spec) throw new Error('this source cannot play in the media worker');
    if (this.closed) return 'closed';
    const event = await this.engine.request((id) => ({ op: 'room-play', room: this.id, id, source: spec }));
    return event?.ev === 'result' ? (event.value as PlayResult) : 'closed';
  }

  /** Stops what plays to the room. */
  stop(): void {
    if (!this.closed) this.engine.send({ op: 'room-stop', room: this.id });
  }

  /** Records the room's mix (the engine's recording path: a Recording like a call's). */
  record(maxSeconds: number): RecordingHandle {
    if (this.closed) return { done: Promise.resolve(EMPTY_RECORDING), stop: () => EMPTY_RECORDING };
    return this.engine.recording(0, (id) => ({ op: 'room-record', room: this.id, id, maxSeconds }));
  }

  /** @internal an event of the worker for this room. */
  receive(event: RoomEvent): void {
    if (event.ev === 'room-closed') {
      this.closed = true;
      this.engine.rooms.delete(this.id);
      this.listeners.lost?.();
      return;
    }
    if (this.closed) return;
    if (event.ev === 'room-talk') {
      const endpoint = this.members.get(event.endpoint);
      if (endpoint) this.listeners.talk?.(endpoint, event.talk);
      return;
    }
    const endpoint = event.endpoint === null ? null : this.members.get(event.endpoint);
    if (endpoint !== undefined) this.listeners.floor?.(endpoint);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.engine.rooms.delete(this.id);
    this.members.clear();
    this.engine.send({ op: 'room-close', room: this.id });
  }
}
