/**
 * Live presentations (spec "States and transitions: Presentation", "Presentation" control and
 * event calls; events presentation_status and presentation_keepalive).
 *
 * State, members and subscribers are rows in the database, so every node that shares it sees
 * the same presentation; a change locks the presentation's state row first, so changes of one
 * presentation apply one after the other whichever node takes them. Nodes keep in memory only
 * timers: the coalescing of member-change statuses and the presence round.
 *
 * Presence: every KEEPALIVE_INTERVAL_MS each node sends presentation_keepalive to the sessions
 * of its members; a member answers with control keepalive (any control counts too). A member
 * that has not answered for DROP_AFTER_MS, or whose session ended, is dropped by whichever node
 * notices first. When the moderator leaves or is dropped, the member who joined first becomes
 * moderator; when the last member goes, the presentation stops.
 */

import type { FastifyBaseLogger } from 'fastify';
import type { SessionResolver } from '../../platform/access.js';
import { type Clock, systemClock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import { nowSeconds } from '../../platform/ids.js';
import { type AccessedObject, Level, type ObjectStore } from '../../platform/object-store/index.js';
import * as repo from './presentation.repository.js';
import type { ControlBody } from './presentation.schema.js';
import { PRESENTATION, type PresentationData } from './presentation.type.js';

/** How often members are asked to confirm their presence. */
export const KEEPALIVE_INTERVAL_MS = 20_000;
/** A member that has not answered for this long is dropped (two missed requests and slack). */
export const DROP_AFTER_MS = 50_000;
/**
 * Joins and leaves are reported together in one presentation_status (with the member list)
 * after this long: 1 ms per member, at least MEMBER_STATUS_DELAY_MS and at most
 * MEMBER_STATUS_MAX_DELAY_MS, so that a wave of joins to a large presentation does not send its
 * growing member list to every subscriber for every join.
 */
export const MEMBER_STATUS_DELAY_MS = 100;
export const MEMBER_STATUS_MAX_DELAY_MS = 1000;
/** Keepalive requests to many members go out in slices of this many sessions ... */
const KEEPALIVE_SLICE = 100;
/** ... spread over this long, so that the answers do not all arrive at once. */
const KEEPALIVE_SPREAD_MS = 5000;

export interface Pointer {
  x: number;
  y: number;
  visible: boolean;
}

/** Where a new presentation's pointer is: the middle, hidden. */
const INITIAL_POINTER: Pointer = { x: 0.5, y: 0.5, visible: false };

export interface PresentationLiveDeps {
  readonly store: ObjectStore;
  readonly hub: EventHub;
  /** This node's sessions: members and subscribers of ended sessions are dropped. */
  readonly sessions: Pick<SessionResolver, 'findByDid'>;
  /** PUBLIC_URL of this node. */
  readonly node: string;
  readonly log: FastifyBaseLogger;
  /** The wall clock (tests set their own). */
  readonly clock?: Clock;
}

/** The presentation_status payload (documented in the OpenAPI description of the event call). */
export interface StatusPayload {
  presentation: string;
  busy: boolean;
  version: number;
  moderator?: string;
  page?: number;
  pointer?: Pointer;
  member_count?: number;
  member?: string[];
}

/** What a transition changed: the members, the rest of the state (moderator, page, pointer, busy), both. */
type Change = 'none' | 'members' | 'state' | 'both';

/** Thrown inside a transaction to roll it back when it turned out to change nothing. */
class NothingChanged extends Error {}

function parsePointer(text: string): Pointer {
  const value = JSON.parse(text) as Partial<Pointer>;
  return {
    x: value.x ?? INITIAL_POINTER.x,
    y: value.y ?? INITIAL_POINTER.y,
    visible: value.visible ?? INITIAL_POINTER.visible,
  };
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

export class PresentationLiveService {
  private readonly clock: Clock;
  private readonly pendingMemberStatus = new Map<string, NodeJS.Timeout>();
  private readonly keepaliveTimers = new Set<NodeJS.Timeout>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(private readonly deps: PresentationLiveDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  /** Starts this node's presence round. */
  start(): void {
    this.timer = setInterval(() => {
      this.tick().catch((error: unknown) =>
        this.deps.log.error({ err: error }, 'presentation presence round failed'),
      );
    }, KEEPALIVE_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const timer of this.pendingMemberStatus.values()) clearTimeout(timer);
    this.pendingMemberStatus.clear();
    for (const timer of this.keepaliveTimers) clearTimeout(timer);
    this.keepaliveTimers.clear();
    await this.ticking;
  }

  /** `busy` of a presentation object. */
  async isBusy(db: Db, presentation: string): Promise<boolean> {
    return (await repo.listBusy(db, [presentation])).length > 0;
  }

  // ---------------------------------------------------------------- subscription

  /** GET /api/presentation/{uuid}/event: a busy presentation sends its status to the session at once. */
  async subscribe(user: string, did: string, presentation: string): Promise<boolean> {
    const { store } = this.deps;
    return store.write(async (w) => {
      await store.getForRead(w.trx, user, presentation, PRESENTATION);
      await repo.upsertSubscriber(w.trx, {
        presentation,
        did,
        user_uuid: user,
        node: this.deps.node,
        time: nowSeconds(this.clock),
      });
      const payload = await this.statusPayload(w.trx, presentation, true);
      if (payload.busy) w.afterCommit(async () => this.send([did], payload));
      return payload.busy;
    });
  }

  /** DELETE /api/presentation/{uuid}/event. */
  async unsubscribe(user: string, did: string, presentation: string): Promise<void> {
    const { store } = this.deps;
    await store.getForRead(store.db, user, presentation, PRESENTATION);
    await store.writeStatement((w) => repo.deleteSubscriber(w.trx, presentation, did));
  }

  // ---------------------------------------------------------------- control

  /** POST /api/presentation/{uuid}/control: one transition of the state table. */
  async control(user: string, did: string, presentation: string, body: ControlBody): Promise<void> {
    if (body.control === 'page' && body.page === undefined)
      throw new ApiError('missing-element', 'missing page');
    if (body.control === 'moderator' && body.moderator === undefined)
      throw new ApiError('missing-element', 'missing moderator');
    const { store } = this.deps;
    if (body.control === 'keepalive') {
      // The most frequent control: no transaction and no lock, presence is the member's own row
      // (one statement, a write of its own).
      await store.getForRead(store.db, user, presentation, PRESENTATION);
      const now = this.clock.now();
      if ((await store.writeStatement((w) => repo.touchMember(w.trx, presentation, user, now))) === 0) {
        throw new ApiError('illegal-state', 'not a member of a started presentation');
      }
      return;
    }
    try {
      await store.write(async (w) => {
        const found = await store.getForRead(w.trx, user, presentation, PRESENTATION);
        const now = this.clock.now();
        // Joining again (say from a new session) moves the member to the calling session; only
        // members of started presentations exist, and a concurrent stop leaves nothing to move.
        if (
          body.control === 'join' &&
          (await repo.moveMember(w.trx, presentation, user, did, this.deps.node, now)) > 0
        ) {
          return;
        }
        const change =
          body.control === 'start'
            ? await this.startPresentation(w, found, user, did, now)
            : await this.changeStarted(w, found, user, did, body, now);
        if (change === 'none') throw new NothingChanged();
        await this.announce(w, presentation, change);
      });
    } catch (error) {
      if (!(error instanceof NothingChanged)) throw error;
    }
  }

  private async startPresentation(
    w: UnitOfWork,
    found: AccessedObject,
    user: string,
    did: string,
    now: number,
  ): Promise<Change> {
    const presentation = found.row.uuid;
    await repo.insertIdleState(w.trx, presentation);
    const started = await repo.startState(
      w.trx,
      presentation,
      user,
      JSON.stringify(INITIAL_POINTER),
      nowSeconds(this.clock),
    );
    if (started === 0) throw new ApiError('illegal-state', 'presentation already started');
    // Presenting is a use of the object beyond reading it.
    if (found.level < Level.write) throw new ApiError('access-denied', 'starting needs write access');
    await repo.deleteAllMembers(w.trx, presentation);
    await repo.upsertMember(w.trx, {
      presentation,
      user_uuid: user,
      did,
      node: this.deps.node,
      joined: now,
      seen: now,
    });
    return 'both';
  }

  private async changeStarted(
    w: UnitOfWork,
    found: AccessedObject,
    user: string,
    did: string,
    body: ControlBody,
    now: number,
  ): Promise<Change> {
    const presentation = found.row.uuid;
    if ((await repo.bumpStartedState(w.trx, presentation)) === 0) {
      throw new ApiError('illegal-state', 'presentation not started');
    }
    const state = (await repo.findState(w.trx, presentation))!;
    const member = await repo.findMember(w.trx, presentation, user);
    if (body.control === 'join') {
      await repo.upsertMember(w.trx, {
        presentation,
        user_uuid: user,
        did,
        node: this.deps.node,
        joined: now,
        seen: now,
      });
      return 'members';
    }
    if (!member) throw new ApiError('illegal-state', 'not a member of the presentation');
    if (body.control === 'leave') {
      await repo.deleteMember(w.trx, presentation, user);
      return this.afterMembersLeft(w, state);
    }
    // The remaining controls are the moderator's (the caller's choice of status: access-denied).
    if (state.moderator !== user) throw new ApiError('access-denied', 'only the moderator may do this');
    await repo.touchMember(w.trx, presentation, user, now);
    switch (body.control) {
      case 'stop':
        await repo.deleteAllMembers(w.trx, presentation);
        await repo.updateState(w.trx, presentation, { busy: 0, moderator: null, started: null });
        return 'both';
      case 'moderator': {
        const target = body.moderator!.toLowerCase();
        if (!(await repo.findMember(w.trx, presentation, target))) {
          throw new ApiError('illegal-state', 'the new moderator is not a member');
        }
        if (target === state.moderator) return 'none';
        await repo.updateState(w.trx, presentation, { moderator: target });
        return 'state';
      }
      case 'page': {
        const pageCount = this.deps.store.dataOf<PresentationData>(found.row).page_count ?? 0;
        const page = body.page!;
        if (page > pageCount)
          throw new ApiError('wrong-syntax', `page outside the document (1..${pageCount})`);
        if (page === state.page) return 'none';
        await repo.updateState(w.trx, presentation, { page });
        return 'state';
      }
      case 'pointer': {
        const before = parsePointer(state.pointer);
        const after: Pointer = {
          x: body.x ?? before.x,
          y: body.y ?? before.y,
          visible: body.visible ?? before.visible,
        };
        if (after.x === before.x && after.y === before.y && after.visible === before.visible) return 'none';
        await repo.updateState(w.trx, presentation, { pointer: JSON.stringify(after) });
        return 'state';
      }
      default:
        throw new ApiError('wrong-syntax', 'bad control');
    }
  }

  /** After members left: a new moderator when the moderator went, or the end when nobody is left. */
  private async afterMembersLeft(w: UnitOfWork, state: repo.StateRow): Promise<'members' | 'both'> {
    const presentation = state.presentation;
    if (state.moderator && (await repo.findMember(w.trx, presentation, state.moderator))) return 'members';
    const next = await repo.findFirstMember(w.trx, presentation);
    if (!next) {
      await repo.updateState(w.trx, presentation, { busy: 0, moderator: null, started: null });
    } else {
      await repo.updateState(w.trx, presentation, { moderator: next.user_uuid });
    }
    return 'both';
  }

  // ---------------------------------------------------------------- object changes

  /**
   * The presentation is being deleted (trash or purge): it stops, and its subscribers hear so
   * (before a purge removes them with the object).
   */
  async endForDeletion(w: UnitOfWork, presentation: string): Promise<void> {
    if ((await repo.bumpStartedState(w.trx, presentation)) === 0) return;
    await repo.deleteAllMembers(w.trx, presentation);
    await repo.updateState(w.trx, presentation, { busy: 0, moderator: null, started: null });
    await this.announce(w, presentation, 'both');
  }

  /** New content: a current page beyond the new slides goes back to the first. */
  async contentChanged(w: UnitOfWork, presentation: string, pageCount: number): Promise<void> {
    const state = await repo.findState(w.trx, presentation);
    if (state?.busy !== 1 || state.page <= pageCount) return;
    if ((await repo.bumpStartedState(w.trx, presentation)) === 0) return;
    await repo.updateState(w.trx, presentation, { page: 1 });
    await this.announce(w, presentation, 'state');
  }

  // ---------------------------------------------------------------- presence

  /**
   * One presence round of this node: forgets subscribers and drops members whose sessions
   * ended, drops members of any node that stopped answering, gives presentations that lost
   * their moderator another one, and asks this node's members for a keepalive. Runs every
   * KEEPALIVE_INTERVAL_MS; `now` is for tests. Rounds run one after the other: a round asked
   * for while one runs waits for it and then runs, so it sees what changed meanwhile (joining
   * the running round instead missed those changes).
   */
  async tick(now?: number): Promise<void> {
    while (this.ticking) await this.ticking;
    this.ticking = this.runTick(now ?? this.clock.now()).finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  private async runTick(now: number): Promise<void> {
    const { db } = this.deps.store;
    const { sessions, node } = this.deps;
    const subscribers = await repo.listNodeSubscriberDids(db, node);
    const ended = subscribers.filter((did) => !sessions.findByDid(did));
    for (const part of chunks(ended, 500))
      await this.deps.store.writeStatement((w) => repo.deleteSubscriptionsOf(w.trx, part));

    const members = await repo.listNodeMembers(db, node);
    const alive = new Map<string, string[]>();
    const gone = new Map<string, string[]>();
    for (const member of members) {
      const into = sessions.findByDid(member.did) ? alive : gone;
      const list = into.get(member.presentation) ?? [];
      list.push(member.did);
      into.set(member.presentation, list);
    }
    for (const [presentation, dids] of gone) {
      await this.dropMembers(presentation, (w) => repo.deleteMembersInSessions(w.trx, presentation, dids));
    }
    const cutoff = now - DROP_AFTER_MS;
    for (const presentation of await repo.listPresentationsWithStaleMembers(db, cutoff)) {
      await this.dropMembers(presentation, (w) => repo.deleteStaleMembers(w.trx, presentation, cutoff));
    }
    // Members that vanished with their account leave no moderator behind.
    for (const presentation of await repo.listPresentationsWithoutModerator(db)) {
      await this.dropMembers(presentation, async () => 1);
    }
    for (const [presentation, dids] of alive) this.requestKeepalives(presentation, dids);
  }

  /** presentation_keepalive to the sessions, in slices spread over KEEPALIVE_SPREAD_MS. */
  private requestKeepalives(presentation: string, dids: readonly string[]): void {
    const slices = chunks(dids, KEEPALIVE_SLICE);
    slices.forEach((slice, index) => {
      const send = () => this.deps.hub.emit({ sessions: slice }, 'presentation_keepalive', { presentation });
      if (index === 0) {
        send();
        return;
      }
      const timer = setTimeout(
        () => {
          this.keepaliveTimers.delete(timer);
          send();
        },
        (index * KEEPALIVE_SPREAD_MS) / slices.length,
      );
      this.keepaliveTimers.add(timer);
    });
  }

  private async dropMembers(presentation: string, drop: (w: UnitOfWork) => Promise<number>): Promise<void> {
    const { store } = this.deps;
    try {
      await store.write(async (w) => {
        if ((await repo.bumpStartedState(w.trx, presentation)) === 0) {
          // Not started: members left over cannot exist, but never keep them.
          await repo.deleteAllMembers(w.trx, presentation);
          throw new NothingChanged();
        }
        const state = (await repo.findState(w.trx, presentation))!;
        if ((await drop(w)) === 0) throw new NothingChanged();
        await this.announce(w, presentation, await this.afterMembersLeft(w, state));
      });
    } catch (error) {
      if (!(error instanceof NothingChanged)) throw error;
    }
  }

  // ---------------------------------------------------------------- presentation_status

  /**
   * Sends presentation_status to every subscriber after the commit. A change of members alone
   * waits (see MEMBER_STATUS_DELAY_MS) so that a wave of joins makes one event; other changes
   * go at once, with the member list when the members changed too. Page and pointer changes
   * never carry the list, so that they stay small however large the presentation.
   */
  private async announce(
    w: UnitOfWork,
    presentation: string,
    change: Exclude<Change, 'none'>,
  ): Promise<void> {
    if (change === 'members') {
      const count = await repo.countMembers(w.trx, presentation);
      const delay = Math.min(MEMBER_STATUS_MAX_DELAY_MS, Math.max(MEMBER_STATUS_DELAY_MS, count));
      w.afterCommit(async () => this.scheduleMemberStatus(presentation, delay));
      return;
    }
    const withMembers = change === 'both';
    const payload = await this.statusPayload(w.trx, presentation, withMembers);
    const dids = await repo.listSubscriberDids(w.trx, presentation);
    w.afterCommit(async () => {
      if (withMembers) this.cancelMemberStatus(presentation);
      this.send(dids, payload);
    });
  }

  private scheduleMemberStatus(presentation: string, delay: number): void {
    if (this.pendingMemberStatus.has(presentation)) return;
    const timer = setTimeout(() => {
      this.pendingMemberStatus.delete(presentation);
      this.sendFullStatus(presentation).catch((error: unknown) =>
        this.deps.log.error({ err: error, presentation }, 'presentation_status not sent'),
      );
    }, delay);
    this.pendingMemberStatus.set(presentation, timer);
  }

  private cancelMemberStatus(presentation: string): void {
    const timer = this.pendingMemberStatus.get(presentation);
    if (timer) clearTimeout(timer);
    this.pendingMemberStatus.delete(presentation);
  }

  private async sendFullStatus(presentation: string): Promise<void> {
    const { db } = this.deps.store;
    const payload = await this.statusPayload(db, presentation, true);
    this.send(await repo.listSubscriberDids(db, presentation), payload);
  }

  private send(dids: readonly string[], payload: StatusPayload): void {
    if (dids.length > 0) this.deps.hub.emit({ sessions: dids }, 'presentation_status', { ...payload });
  }

  /** The presentation's live state as presentation_status carries it. */
  async statusPayload(db: Db, presentation: string, withMembers: boolean): Promise<StatusPayload> {
    const state = await repo.findState(db, presentation);
    if (state?.busy !== 1) return { presentation, busy: false, version: state?.version ?? 0 };
    const members = withMembers ? await repo.listMemberUuids(db, presentation) : undefined;
    return {
      presentation,
      busy: true,
      version: state.version,
      moderator: state.moderator ?? '',
      page: state.page,
      pointer: parsePointer(state.pointer),
      member_count: members ? members.length : await repo.countMembers(db, presentation),
      ...(members ? { member: members } : {}),
    };
  }
}
