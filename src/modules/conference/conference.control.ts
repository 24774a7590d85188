/**
 * A live room's members and controls (spec `/api/conference` family, listed without a shape;
 * docs/decisions.md "Conferences: member and room control"): GET the members, change a member
 * (mute, deaf, volume_in, volume_out, floor), kick it, and the room's lock and mute-all. Each
 * needs write access to the conference object; the room is the call engine's. A room lives on
 * one node: a request for a room live on another node is carried out there, asked over the
 * nodes' shared path (useNodes; decisions "Several nodes").
 */
import { ApiError, type ApiStatus } from '../../platform/errors.js';
import type { ObjectRow, ObjectStore, ObjectTypeDefinition } from '../../platform/object-store/index.js';
import { pageItems } from '../../platform/paging.js';
import {
  ConferenceError,
  type ConferenceMember,
  type ConferenceSettings,
  type LiveRoom,
  type RoomHome,
  type RuleCallAction,
  type Telephony,
} from '../../telephony/index.js';
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

/** The node path's topic of the room questions (docs/decisions.md "Conferences", several nodes). */
const ROOM_TOPIC = 'conference.room';

/** The nodes' shared path (the call area's CallNodes: serve and askNodes). */
export interface RoomNodePath {
  serve(topic: string, handler: (body: unknown) => Promise<unknown>): void;
  askNodes(topic: string, body: unknown): Promise<{ answers: unknown[]; complete: boolean }>;
}

/** A command for a live room, carried out where the room lives. */
type RoomCommand =
  | { op: 'member'; member: string; body: MemberControlBody }
  | { op: 'kick'; member: string }
  | { op: 'room'; body: RoomControlBody };

/**
 * Calls placed into a live room by its home (the node whose media worker mixes it): a dial-out
 * (POST .../dial), a rule's call action; the asking node judged access and sends the settings.
 */
type RoomPlacement =
  | {
      op: 'dial';
      request: { owner: string; from: string | undefined; to: string; ringSeconds: number };
      settings: ConferenceSettings;
    }
  | { op: 'rule-call'; owner: string; action: RuleCallAction; settings: ConferenceSettings };

/** A question to the other nodes about room `room`. */
interface RoomQuestion {
  room: string;
  op: { op: 'home' } | { op: 'members' } | { op: 'status' } | RoomCommand | RoomPlacement;
}

/** A member as GET .../member lists it, with its call's UUID. */
interface MemberEntry {
  call: string;
  member: MemberObject;
}

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

  /**
   * Where the room's other nodes' callers and commands go (the call area's node path, wired
   * once it exists: useNodes); without it this node knows only its own rooms.
   */
  private nodes: RoomNodePath | undefined;

  /** Answers the other nodes' questions about the rooms live here, and asks them about theirs. */
  useNodes(nodes: RoomNodePath): void {
    this.nodes = nodes;
    nodes.serve(ROOM_TOPIC, (question) => this.answer(question as RoomQuestion));
  }

  /** The home of room `uuid` when it is live on another node (its UA's address, the room's token). */
  async home(uuid: string): Promise<RoomHome | undefined> {
    return (await this.ask(uuid, { op: 'home' }))?.answer as RoomHome | undefined;
  }

  /**
   * The members of room `uuid` as its events show them (conference_status), wherever it is live;
   * undefined when no node holds it.
   */
  async liveMembers(uuid: string): Promise<Record<string, ConferenceMember> | undefined> {
    const here = this.deps.telephony.calls?.conferenceMembers(uuid);
    if (here) return here;
    return (await this.ask(uuid, { op: 'status' }))?.answer as Record<string, ConferenceMember> | undefined;
  }

  /**
   * GET /api/conference/{uuid}/member: the live members, paged by joining time; none when not
   * live. A room live on another node: that node's members (a node silent for ANSWER_MS is left
   * out, as GET /api/call leaves it out).
   */
  async listMembers(
    user: string,
    uuid: string,
    query: ListMembersQuery,
  ): Promise<Record<string, MemberObject>> {
    await this.requireWrite(user, uuid);
    const entries = this.liveRoom(uuid)
      ? this.entriesHere(uuid)
      : (((await this.ask(uuid, { op: 'members' }))?.answer as MemberEntry[] | undefined) ?? []);
    const page = pageItems(
      entries,
      query,
      // Joining time, then the call UUID: a stable order for `start`.
      {
        time: (entry) => entry.member.time,
        key: (entry) => `${String(entry.member.time).padStart(12, '0')}:${entry.call}`,
      },
      MEMBER_LIST_COUNT.default,
    );
    return Object.fromEntries(page.map(({ call, member }) => [call, member]));
  }

  /** The members of room `uuid` live here, in joining order, as the API shows them. */
  private entriesHere(uuid: string): MemberEntry[] {
    const room = this.liveRoom(uuid);
    // Who each member is (phone, user, moderator), as the room's events show it: one shape.
    const known = this.deps.telephony.calls?.conferenceMembers(uuid) ?? {};
    return (room?.entries() ?? []).map(({ view, since }) => {
      const { call, ...flags } = view;
      return {
        call,
        member: { ...known[call], ...flags, moderator: room?.isModerator(call) ?? false, time: since },
      };
    });
  }

  /**
   * POST /api/conference/{uuid}/member/{member}: the fields given change, all or none. wrong-object,
   * access-denied (read access only), illegal-state (not, or no longer, a member of the live room).
   * Volumes outside −4..4 never reach here (the schema: wrong-syntax).
   */
  async controlMember(user: string, uuid: string, member: string, body: MemberControlBody): Promise<void> {
    await this.requireWrite(user, uuid);
    await this.onHolder(uuid, { op: 'member', member, body });
  }

  /** DELETE /api/conference/{uuid}/member/{member}: kicks the member (its call is hung up). */
  async kickMember(user: string, uuid: string, member: string): Promise<void> {
    await this.requireWrite(user, uuid);
    await this.onHolder(uuid, { op: 'kick', member });
  }

  /**
   * POST /api/conference/{uuid}/control: lock or unlock the live room, mute or unmute all its
   * members but its moderators. wrong-object, access-denied, illegal-state (the room is not live).
   */
  async controlRoom(user: string, uuid: string, body: RoomControlBody): Promise<void> {
    await this.requireWrite(user, uuid);
    await this.onHolder(uuid, { op: 'room', body });
  }

  /** A command carried out on the room's home: here when it is live here, else where it is. */
  private async onHolder(uuid: string, command: RoomCommand): Promise<void> {
    if (!this.liveRoom(uuid)) {
      const asked = await this.ask(uuid, command);
      if (asked?.answer) {
        const outcome = asked.answer as { status: ApiStatus | 'ok'; message?: string };
        if (outcome.status !== 'ok') throw new ApiError(outcome.status, outcome.message);
        return;
      }
      // A node silent in time may hold the room (as a call command: fail).
      if (asked && !asked.complete)
        throw new ApiError('fail', `a node did not answer for room ${uuid} in time`);
    }
    this.commandHere(uuid, command);
  }

  private commandHere(uuid: string, command: RoomCommand): void {
    if (command.op === 'room') {
      const room = this.liveRoom(uuid);
      if (!room) throw new ApiError('illegal-state', `conference ${uuid} has no members now`);
      const { body } = command;
      this.engine(() => {
        if (body.lock !== undefined) room.lock(body.lock);
        if (body.mute_all !== undefined) room.muteAll(body.mute_all);
      });
      return;
    }
    const { member } = command;
    const room = this.memberRoom(uuid, member);
    if (command.op === 'kick') {
      const call = this.deps.telephony.calls?.calls.get(member);
      if (!call) throw new ApiError('illegal-state', `member ${member} has left`);
      this.engine(() => room.kick(call));
      return;
    }
    const { floor, ...change } = command.body;
    this.engine(() => {
      room.control(member, change);
      if (floor !== undefined) room.floor(member, floor);
    });
  }

  /** Asks the other nodes about room `uuid`: the holder's answer (none: no node holds it). */
  private async ask(
    uuid: string,
    op: RoomQuestion['op'],
  ): Promise<{ answer: unknown; complete: boolean } | undefined> {
    if (!this.nodes) return undefined;
    const { answers, complete } = await this.nodes.askNodes(ROOM_TOPIC, {
      room: uuid,
      op,
    } satisfies RoomQuestion);
    return { answer: answers[0], complete };
  }

  /** Another node's question about a room: null when it is not live here. */
  private async answer(question: RoomQuestion): Promise<unknown> {
    const room = this.liveRoom(question.room);
    const engine = this.deps.telephony.calls;
    if (!room || !engine) return null;
    const { op } = question;
    if (op.op === 'home') return { address: engine.address, token: room.token } satisfies RoomHome;
    if (op.op === 'members') return this.entriesHere(question.room);
    if (op.op === 'status') return engine.conferenceMembers(question.room) ?? null;
    try {
      if (op.op === 'dial' || op.op === 'rule-call') return await this.placeHere(op);
      this.commandHere(question.room, op);
      return { status: 'ok' };
    } catch (error) {
      if (error instanceof ApiError) return { status: error.status, message: error.message };
      throw error;
    }
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
    const placement: RoomPlacement = {
      op: 'dial',
      request: { owner: user, from: body.from, to: body.to, ringSeconds: body.timeout ?? 60 },
      settings: roomSettings(conferenceRoomOf(this.deps.store, row)),
    };
    return ((await this.onHome(uuid, placement)) ?? (await this.placeHere(placement))).call!;
  }

  /**
   * A rule's call action whose last command names room `uuid` (docs/decisions.md "Rule
   * engine", call): the calls are placed where the room is live (its members are mixed there),
   * else here, where the first to answer opens it. wrong-object or access-denied when `owner`
   * may no longer write the room; illegal-state without a call engine.
   */
  async ruleCall(owner: string, uuid: string, action: RuleCallAction): Promise<void> {
    const row = await this.requireWrite(owner, uuid);
    const placement: RoomPlacement = {
      op: 'rule-call',
      owner,
      action,
      settings: roomSettings(conferenceRoomOf(this.deps.store, row)),
    };
    if (!(await this.onHome(uuid, placement))) await this.placeHere(placement);
  }

  /**
   * A placement sent to the room's home when it is live on another node: the home's outcome;
   * undefined when it is live here or nowhere (a silent node's room is not waited for: the
   * calls open a room here, as a caller kept by this node does).
   */
  private async onHome(uuid: string, placement: RoomPlacement): Promise<{ call?: string } | undefined> {
    if (this.liveRoom(uuid)) return undefined;
    const outcome = (await this.ask(uuid, placement))?.answer as
      | { status: ApiStatus | 'ok'; message?: string; call?: string }
      | undefined;
    if (!outcome) return undefined;
    if (outcome.status !== 'ok') throw new ApiError(outcome.status, outcome.message);
    return outcome;
  }

  /** Places the calls of `placement` on this node's engine; the room opens with its first member. */
  private async placeHere(placement: RoomPlacement): Promise<{ status: 'ok'; call?: string }> {
    const engine = this.deps.telephony.calls;
    if (!engine) throw new ApiError('illegal-state', 'the call engine is not running on this node');
    if (placement.op === 'rule-call') {
      await engine.ruleCall(placement.owner, placement.action, placement.settings);
      return { status: 'ok' };
    }
    const call = await engine.dialRoom(placement.request, placement.settings);
    if (!call) throw new ApiError('quota-exceeded', 'all concurrent calls of the user are taken');
    return { status: 'ok', call: call.uuid };
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
