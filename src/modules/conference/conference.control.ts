/**
 * A live room's members and controls (spec `/api/conference` family, listed without a shape;
 * docs/decisions.md "Conferences: member and room control"): GET the members, change a member
 * (mute, deaf, volume_in, volume_out, floor), kick it, and the room's lock and mute-all. Each
 * needs write access to the conference object; the room is the call engine's (a room lives on
 * one node: this node's rooms only).
 */
import { ApiError } from '../../platform/errors.js';
import type { ObjectRow, ObjectStore, ObjectTypeDefinition } from '../../platform/object-store/index.js';
import { pageItems } from '../../platform/paging.js';
import { ConferenceError, type LiveRoom, type Telephony } from '../../telephony/index.js';
import { requireOutgoing } from '../call/index.js';
import type { CallFilterService } from '../callfilter/index.js';
import type { PhoneService } from '../phone/index.js';
import {
  type DialMemberBody,
  type ListMembersQuery,
  MEMBER_LIST_COUNT,
  type MemberControlBody,
  type MemberObject,
  type RoomControlBody,
} from './conference.schema.js';
import { conferenceRoomOf, roomSettings } from './conference.service.js';

export interface ConferenceControlDeps {
  readonly store: ObjectStore;
  /** The conference type of the store (ConferenceService.definition). */
  readonly definition: ObjectTypeDefinition;
  readonly telephony: Pick<Telephony, 'calls'>;
  readonly phones: Pick<PhoneService, 'findOwnNumber'>;
  readonly callFilters: Pick<CallFilterService, 'callFilterOf'>;
}

export class ConferenceControl {
  constructor(private readonly deps: ConferenceControlDeps) {}

  /** GET /api/conference/{uuid}/member: the live members, paged by joining time; none when not live. */
  async listMembers(
    user: string,
    uuid: string,
    query: ListMembersQuery,
  ): Promise<Record<string, MemberObject>> {
    await this.requireWrite(user, uuid);
    const room = this.liveRoom(uuid);
    const entries = room ? room.entries() : [];
    const page = pageItems(
      entries,
      query,
      // Joining time, then the call UUID: a stable order for `start`.
      {
        time: (entry) => entry.since,
        key: (entry) => `${String(entry.since).padStart(12, '0')}:${entry.view.call}`,
      },
      MEMBER_LIST_COUNT.default,
    );
    // Who each member is (phone, user, moderator), as the room's events show it: one shape.
    const known = this.deps.telephony.calls?.conferenceMembers(uuid) ?? {};
    return Object.fromEntries(
      page.map(({ view, since }) => {
        const { call, ...flags } = view;
        return [call, { ...known[call], ...flags, moderator: room?.isModerator(call) ?? false, time: since }];
      }),
    );
  }

  /**
   * POST /api/conference/{uuid}/member/{member}: the fields given change, all or none. wrong-object,
   * access-denied (read access only), illegal-state (not, or no longer, a member of the live room).
   * Volumes outside −4..4 never reach here (the schema: wrong-syntax).
   */
  async controlMember(user: string, uuid: string, member: string, body: MemberControlBody): Promise<void> {
    await this.requireWrite(user, uuid);
    const room = this.memberRoom(uuid, member);
    const { floor, ...change } = body;
    this.engine(() => {
      room.control(member, change);
      if (floor !== undefined) room.floor(member, floor);
    });
  }

  /** DELETE /api/conference/{uuid}/member/{member}: kicks the member (its call is hung up). */
  async kickMember(user: string, uuid: string, member: string): Promise<void> {
    await this.requireWrite(user, uuid);
    const room = this.memberRoom(uuid, member);
    const call = this.deps.telephony.calls?.calls.get(member);
    if (!call) throw new ApiError('illegal-state', `member ${member} has left`);
    this.engine(() => room.kick(call));
  }

  /**
   * POST /api/conference/{uuid}/control: lock or unlock the live room, mute or unmute all its
   * members but its moderators. wrong-object, access-denied, illegal-state (the room is not live).
   */
  async controlRoom(user: string, uuid: string, body: RoomControlBody): Promise<void> {
    await this.requireWrite(user, uuid);
    const room = this.liveRoom(uuid);
    if (!room) throw new ApiError('illegal-state', `conference ${uuid} has no members now`);
    this.engine(() => {
      if (body.lock !== undefined) room.lock(body.lock);
      if (body.mute_all !== undefined) room.muteAll(body.mute_all);
    });
  }

  /**
   * POST /api/conference/{uuid}/dial: a call of the user to `to` that joins the room once
   * answered, judged as the call API's dial: wrong-object, access-denied (read access only; `from`
   * locked; the user's call filter refuses `to` for the call API), wrong-phone (`from` not the
   * user's), illegal-state (the call engine is not running), quota-exceeded (the user's
   * concurrent calls are all taken). The call's UUID at once.
   */
  async dial(user: string, uuid: string, body: DialMemberBody): Promise<string> {
    const row = await this.requireWrite(user, uuid);
    await requireOutgoing(this.deps, user, body.from, body.to);
    const engine = this.deps.telephony.calls;
    if (!engine) throw new ApiError('illegal-state', 'the call engine is not running');
    // The room is live from its first member on: one answering while it is empty opens it.
    const call = await engine.dialRoom(
      { owner: user, from: body.from, to: body.to, ringSeconds: body.timeout ?? 60 },
      roomSettings(conferenceRoomOf(this.deps.store, row)),
    );
    if (!call) throw new ApiError('quota-exceeded', 'all concurrent calls of the user are taken');
    return call.uuid;
  }

  private async requireWrite(user: string, uuid: string): Promise<ObjectRow> {
    return (await this.deps.store.getForWrite(this.deps.store.db, user, uuid, this.deps.definition)).row;
  }

  private liveRoom(uuid: string): LiveRoom | undefined {
    const room = this.deps.telephony.calls?.rooms.get(uuid);
    return room && room.size > 0 ? room : undefined;
  }

  private memberRoom(uuid: string, member: string): LiveRoom {
    const room = this.liveRoom(uuid);
    if (!room?.member(member)) throw new ApiError('illegal-state', `${member} is no member of the room now`);
    return room;
  }

  /** Runs a room command, the engine's errors in the spec's words (the engine knows no ApiError). */
  private engine(command: () => void): void {
    try {
      command();
    } catch (error) {
      if (!(error instanceof ConferenceError)) throw error;
      throw new ApiError(
        error.code === 'wrong-volume'
          ? 'wrong-syntax'
          : error.code === 'no-member'
            ? 'illegal-state'
            : 'fail',
        error.message,
      );
    }
  }
}
