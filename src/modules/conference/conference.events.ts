/**
 * A conference's events (spec "Events": conference_start and conference_stop to the users with
 * read access; conference_status, conference_update, conference_join and conference_leave to
 * the subscribers of GET /api/conference/{uuid}/event; docs/decisions.md "Conferences"). The
 * room's events are a topic per conference (`conference:<uuid>`): they are sent to the readers
 * and reach only those of their sessions subscribed to that room; the partner stream sees them
 * as it sees every user event (conference_*).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SessionContext } from '../../platform/access.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import type { ConferenceEvent, RoomMemberView as EngineMemberView } from '../../telephony/index.js';
import type { RecordingService } from '../recording/index.js';
import * as repo from './conference.repository.js';

/** The events of a room, for its subscribers only. */
export const ROOM_EVENTS = ['conference_status', 'conference_update', 'conference_join', 'conference_leave'];
/** The most conferences one session follows at once (exceeded-limit beyond). */
export const MAX_SUBSCRIPTIONS = 20;
/** How long the readers of a live room are taken as known (its events come several times a second). */
const READERS_TTL_MS = 5000;
const PRUNE_INTERVAL_MS = 60_000;

/**
 * A member as the room's events show it (spec "Events", conference_status): the engine's view
 * without its call, keyed by member UUID, with the phone or user it came as.
 */
export type MemberView = Omit<EngineMemberView, 'call'> & {
  readonly phone?: string;
  readonly user?: string;
  /** Entered with the moderator PIN, or from a moderator's (or the owner's) SIP account. */
  readonly moderator?: boolean;
};

/** What the call engine tells of its live rooms; a room not live has no members. */
export interface LiveRooms {
  /** The room's members wherever it is live (another node's room: asked of that node). */
  members(
    conference: string,
  ): Record<string, MemberView> | undefined | Promise<Record<string, MemberView> | undefined>;
}

export interface ConferenceEventsDeps {
  readonly hub: EventHub;
  readonly writer: Writer;
  readonly db: Db;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  /** The users who may read the conference (its events go to them). */
  readonly readers: (room: Room) => Promise<string[]>;
  /** A recorded room's mix becomes a recording of the owner. */
  readonly recordings: Pick<RecordingService, 'createRecording'>;
}

/** A conference as its events name it. */
export interface Room {
  readonly uuid: string;
  readonly owner: string;
  readonly description: string;
}

export function roomTopic(conference: string): string {
  return `conference:${conference}`;
}

export class ConferenceEvents {
  private rooms: LiveRooms | undefined;
  private readonly readersCache = new Map<string, { users: Promise<string[]>; at: number }>();
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ConferenceEventsDeps) {
    deps.hub.topic((payload) => roomTopic(String(payload.conference)), ROOM_EVENTS);
  }

  /** The engine's live rooms (conference_status tells their members). */
  attachRooms(rooms: LiveRooms): void {
    this.rooms = rooms;
  }

  /**
   * Subscribes the session to the room's events for `timeout` seconds (again: renewed); the
   * expiry in seconds. conference_status follows at once. exceeded-limit when the session
   * follows MAX_SUBSCRIPTIONS other rooms. The caller checked read access.
   */
  async subscribe(session: SessionContext, conference: string, timeout: number): Promise<number> {
    const now = this.deps.clock.now();
    const expires = now + timeout * 1000;
    const topic = roomTopic(conference);
    await this.deps.writer.write(async (w) => {
      const renewing = (session.queue.topics.get(topic) ?? 0) > now;
      if (!renewing && (await repo.countSubscriptions(w.trx, session.did, now)) >= MAX_SUBSCRIPTIONS)
        throw new ApiError('exceeded-limit', `a session follows at most ${MAX_SUBSCRIPTIONS} conferences`);
      await repo.upsertSubscription(w.trx, { did: session.did, conference, expires });
    });
    session.queue.topics.set(topic, expires);
    this.deps.hub.emit({ sessions: [session.did] }, 'conference_status', {
      conference,
      member: (await this.rooms?.members(conference)) ?? {},
    });
    return Math.floor(expires / 1000);
  }

  /** Ends the session's subscription to the room (none: ok too). */
  async unsubscribe(session: SessionContext, conference: string): Promise<void> {
    await this.deps.writer.write((w) => repo.deleteSubscription(w.trx, session.did, conference));
    session.queue.topics.delete(roomTopic(conference));
  }

  /** The room began, with its first member: conference_start to the readers. */
  async started(room: Room): Promise<void> {
    this.readersCache.delete(room.uuid);
    this.deps.hub.emit({ users: await this.readersOf(room) }, 'conference_start', {
      conference: room.uuid,
      owner: room.owner,
      ...(room.description ? { description: room.description } : {}),
    });
  }

  /** The room ended, after its last member: conference_stop to the readers. */
  async stopped(room: Room): Promise<void> {
    this.deps.hub.emit({ users: await this.readersOf(room) }, 'conference_stop', {
      conference: room.uuid,
      owner: room.owner,
      ...(room.description ? { description: room.description } : {}),
    });
    this.readersCache.delete(room.uuid);
  }

  /**
   * conference_update (`member`: the changed members, changed fields only), conference_join
   * (`member`: as in status) or conference_leave (`member`: UUIDs) to the room's subscribers.
   */
  async room(
    room: Room,
    event: 'conference_update' | 'conference_join' | 'conference_leave',
    member: Record<string, Partial<MemberView>> | string[],
  ): Promise<void> {
    this.deps.hub.emit({ users: await this.readersOf(room) }, event, { conference: room.uuid, member });
  }

  /**
   * What the call engine's room tells (CallRecorder.conferenceEvent): its start and stop, and
   * its members' joins, changes and leaves (members by their call's UUID); a recorded room's
   * mix becomes a recording of the owner (recording_new, `phone` the conference's UUID).
   */
  async engineEvent(event: ConferenceEvent): Promise<void> {
    const { id, owner, description } = event.room;
    const room = { uuid: id, owner, description };
    switch (event.kind) {
      case 'started':
        return this.started(room);
      case 'joined':
        return this.room(room, 'conference_join', { [event.member]: event.view });
      case 'updated':
        return this.room(room, 'conference_update', { [event.member]: event.changed });
      case 'left':
        return this.room(room, 'conference_leave', [event.member]);
      case 'stopped': {
        await this.stopped(room);
        if (!event.recording) return;
        const recording = await this.deps.recordings.createRecording(owner, {
          from: id,
          to: id,
          description,
          audio: { data: event.recording },
        });
        this.deps.hub.emit({ users: [owner] }, 'recording_new', { owner, recording, phone: id });
      }
    }
  }

  async start(): Promise<void> {
    await this.prune();
    for (const row of await repo.listSubscriptions(this.deps.db))
      this.deps.hub.queueOf(row.did)?.topics.set(roomTopic(row.conference), row.expires);
    this.pruneTimer = setInterval(() => {
      this.prune().catch((error: unknown) =>
        this.deps.log.warn({ err: error }, 'conference subscription prune failed'),
      );
    }, PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  stop(): void {
    clearInterval(this.pruneTimer);
  }

  private prune(): Promise<void> {
    const now = this.deps.clock.now();
    return this.deps.writer.write((w) => repo.deleteEndedSubscriptions(w.trx, now));
  }

  private readersOf(room: Room): Promise<string[]> {
    const now = this.deps.clock.now();
    const cached = this.readersCache.get(room.uuid);
    if (cached && now - cached.at < READERS_TTL_MS) return cached.users;
    const users = this.deps.readers(room).catch(() => []);
    this.readersCache.set(room.uuid, { users, at: now });
    return users;
  }
}
