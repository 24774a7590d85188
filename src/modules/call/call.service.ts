/**
 * Spec "Calls": the call API (docs/decisions.md "The call API"). GET /api/call lists the user's
 * live calls from this node's registry; GET/DELETE /api/call/event subscribe the session to its
 * user's call events, which the hub then delivers to it (the `call` topic); every change of a live
 * call's state is a call_update to the users the call concerns (its owner, the called account's
 * owner) and, through the hub's observers, to their partner's user stream.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SessionContext } from '../../platform/access.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import { uuidSortKey } from '../../platform/ids.js';
import { pageItems } from '../../platform/paging.js';
import { decideCallFilter } from '../../telephony/decisions/index.js';
import {
  type ApiDecision,
  type Call,
  CallError,
  decide,
  isFinal,
  parseDialled,
  type RedirectTarget,
  RedirectTargetError,
  relayedMedia,
  type Telephony,
} from '../../telephony/index.js';
import type { CallFilterService } from '../callfilter/index.js';
import type { PhoneService } from '../phone/index.js';
import type { SipService } from '../sip/index.js';
import * as repo from './call.repository.js';
import {
  CALL_PAGE,
  type CallView,
  type ControlBody,
  type DialBody,
  type ListCallsQuery,
  type MediaControlBody,
} from './call.schema.js';
import { type CallCommandDeps, CallCommands, isMediaCommand } from './call-commands.js';
import { runTransferCommand } from './call-transfer.js';

/** The events of the `call` topic: only sessions subscribed with GET /api/call/event get them. */
export const CALL_EVENTS = ['call_update', 'call_dtmf', 'call_collect'] as const;
const TOPIC = 'call';
/** How long, and how many, ended calls are remembered, so that a late command gets illegal-state. */
const ENDED_KEEP_MS = 10 * 60 * 1000;
const ENDED_KEEP_MAX = 10_000;
/** How often subscriptions of ended sessions and ended subscriptions are dropped. */
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

/** The status of a redirect target the user does not have. */
const TARGET_STATUS = { sip: 'wrong-sip', ivr: 'wrong-ivr', dialplan: 'wrong-dialplan' } as const;

/** answer, reject (busy unless a cause is given) and redirect as the engine takes them. */
function waitDecision(body: Exclude<ControlBody, MediaControlBody>): ApiDecision {
  if (body.command === 'answer') return { command: 'answer' };
  if (body.command === 'reject') return { command: 'reject', cause: body.cause ?? 'busy' };
  // The schema lets exactly one kind through (maxProperties 1; none is missing-element above).
  return { command: 'redirect', target: body.target as RedirectTarget };
}

/** A live call as the API shows it. */
export function callView(call: Call): CallView {
  return {
    uuid: call.uuid,
    direction: call.direction,
    service: call.service,
    from: call.from,
    to: call.to,
    ...(call.number === undefined ? {} : { phone: call.number }),
    state: call.status,
    ...(call.record === undefined ? {} : { parent: call.record.id }),
    date: call.created,
    answered: call.answered,
  };
}

/** What the call API asks of the other areas. */
export interface CallApiDeps {
  readonly db: Db;
  readonly writer: Writer;
  readonly hub: EventHub;
  readonly telephony: Pick<Telephony, 'calls' | 'onCall'>;
  readonly sip: Pick<SipService, 'listAccounts'>;
  readonly phones: Pick<PhoneService, 'findOwnNumber'>;
  readonly callFilters: Pick<CallFilterService, 'callFilterOf'>;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  /** The media commands' (call-commands.ts). */
  readonly commands: Pick<CallCommandDeps, 'recordings' | 'announcementWav' | 'speak'>;
}

/**
 * A call the user places through the API (POST /api/call/dial, POST /api/conference/{uuid}/dial):
 * wrong-phone (`from` is not the user's number), access-denied (`from` is locked, or the
 * partner's call filter refuses `to` for the call API).
 */
export async function requireOutgoing(
  deps: Pick<CallApiDeps, 'phones' | 'callFilters'>,
  user: string,
  from: string | undefined,
  to: string,
): Promise<void> {
  if (from !== undefined) {
    const number = await deps.phones.findOwnNumber(user, from);
    if (number.locked) throw new ApiError('access-denied', `${from} is locked`);
  }
  const filter = await deps.callFilters.callFilterOf(user);
  if (filter && !decideCallFilter(filter, to, 'call_api').allowed)
    throw new ApiError('access-denied', `the call filter refuses a call to ${to}`);
}

export class CallApiService {
  private pruneTimer: NodeJS.Timeout | undefined;
  /** Calls of this node that ended lately: the users they concerned, and when they ended. */
  private readonly ended = new Map<string, { users: readonly string[]; at: number }>();
  private readonly db: Db;
  private readonly writer: Writer;
  private readonly hub: EventHub;
  private readonly clock: Clock;
  private readonly log: FastifyBaseLogger;
  private readonly commands: CallCommands;

  constructor(private readonly deps: CallApiDeps) {
    ({ db: this.db, writer: this.writer, hub: this.hub, clock: this.clock, log: this.log } = deps);
    this.commands = new CallCommands({ ...deps.commands, hub: deps.hub, log: deps.log });
    this.hub.topic(TOPIC, CALL_EVENTS);
    deps.telephony.onCall((call) => this.follow(call));
  }

  /**
   * POST /api/call/dial, judged in this order: wrong-sip (`via` names a SIP account that is not
   * the user's), wrong-phone (`from` is not the user's number), access-denied (`from` is locked,
   * or the partner's call filter refuses `to` for the call API), illegal-state (the call engine
   * is not running), quota-exceeded (the user's concurrent calls are all taken). The call is
   * answered queued: it exists before its first INVITE leaves.
   */
  async dial(user: string, body: DialBody): Promise<CallView> {
    if (parseDialled(body.via).kind === 'sip' && !(body.via in (await this.deps.sip.listAccounts(user))))
      throw new ApiError('wrong-sip', `no SIP account ${body.via}`);
    await requireOutgoing(this.deps, user, body.from, body.to);
    const engine = this.deps.telephony.calls;
    if (!engine) throw new ApiError('illegal-state', 'the call engine is not running');
    const call = await engine.dial({
      owner: user,
      from: body.from,
      via: body.via,
      to: body.to,
      ringSeconds: body.timeout ?? 60,
    });
    if (!call) throw new ApiError('quota-exceeded', 'all concurrent calls of the user are taken');
    return callView(call);
  }

  /**
   * POST /api/call/{uuid}/control: missing-element (a command without what it needs), wrong-call
   * (no such call), access-denied (another user's call), illegal-state (the call has ended or is
   * ending); then the command.
   */
  async control(user: string, uuid: string, body: ControlBody): Promise<void> {
    if (body.command === 'dtmf' && body.digits === undefined)
      throw new ApiError('missing-element', 'dtmf needs digits');
    if (body.command === 'redirect' && Object.keys(body.target ?? {}).length === 0)
      throw new ApiError('missing-element', 'redirect needs a target');
    const call = this.deps.telephony.calls?.calls.get(uuid);
    if (!call?.keys.users.includes(user)) {
      const ended = this.ended.get(uuid);
      if (call || (ended && !ended.users.includes(user)))
        throw new ApiError('access-denied', `call ${uuid} is not the user's`);
      if (ended && this.clock.now() - ended.at < ENDED_KEEP_MS)
        throw new ApiError('illegal-state', `call ${uuid} has ended`);
      throw new ApiError('wrong-call', `no call ${uuid}`);
    }
    if (call.ended || isFinal(call.status)) throw new ApiError('illegal-state', `call ${uuid} is ending`);
    try {
      if (isMediaCommand(body)) {
        await this.commands.run(user, call, body);
        return;
      }
      if (body.command === 'dtmf' && body.digits === undefined)
        throw new ApiError('missing-element', 'dtmf needs digits');
      switch (body.command) {
        case 'hangup':
          await call.hangup();
          return;
        case 'hold':
          await call.hold(body.mode ?? 'inactive');
          return;
        case 'resume':
          await call.resume();
          return;
        case 'dtmf':
          await call.sendDtmf(body.digits!);
          return;
        // A call waiting for the API (api-wait.ts): its decision.
        case 'answer':
        case 'reject':
        case 'redirect':
          await decide(call, waitDecision(body));
          return;
        // transfer, transfer-complete, transfer-cancel, bridge (call-transfer.ts).
        default:
          await runTransferCommand(this.deps.telephony.calls!, user, call, body);
          return;
      }
    } catch (error) {
      if (error instanceof RedirectTargetError) throw new ApiError(TARGET_STATUS[error.kind], error.message);
      // The engine's own errors in the spec's words (the engine knows no ApiError).
      if (error instanceof CallError)
        throw new ApiError(error.code === 'illegal-state' ? 'illegal-state' : 'fail', error.message);
      throw error;
    }
  }

  /** GET /api/call: the user's live calls on this node, paged by the time they began. */
  list(user: string, query: ListCallsQuery): CallView[] {
    const calls = this.deps.telephony.calls?.calls.ofUser(user) ?? new Set<Call>();
    const page = pageItems(
      calls,
      query,
      { time: (call) => Math.floor(call.created / 1000), key: (call) => uuidSortKey(call.uuid) },
      CALL_PAGE.default,
    );
    return page.map(callView);
  }

  /** GET /api/call/event: subscribes the session (or renews) for `timeout` seconds; the expiry in seconds. */
  async subscribe(session: SessionContext, timeout: number): Promise<number> {
    const expires = this.clock.now() + timeout * 1000;
    await this.writer.write((w) => repo.upsertCallSubscription(w.trx, { did: session.did, expires }));
    session.queue.topics.set(TOPIC, expires);
    return Math.floor(expires / 1000);
  }

  /** DELETE /api/call/event: no more call events for the session (none subscribed: ok too). */
  async unsubscribe(session: SessionContext): Promise<void> {
    await this.writer.write((w) => repo.deleteCallSubscription(w.trx, session.did));
    session.queue.topics.delete(TOPIC);
  }

  /** At start: this node's sessions get their subscriptions back; those of ended sessions go. */
  async start(): Promise<void> {
    await this.prune();
    for (const row of await repo.listCallSubscriptions(this.db)) {
      this.hub.queueOf(row.did)?.topics.set(TOPIC, row.expires);
    }
    this.pruneTimer = setInterval(() => {
      this.prune().catch((error: unknown) => this.log.warn({ err: error }, 'call subscription prune failed'));
    }, PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  stop(): void {
    clearInterval(this.pruneTimer);
  }

  private prune(): Promise<void> {
    const now = this.clock.now();
    return this.writer.write((w) => repo.deleteEndedCallSubscriptions(w.trx, now));
  }

  /** Sends call_update for the new call and for each change of its state, to whom it concerns. */
  private follow(call: Call): void {
    let last = '';
    const update = (users: readonly string[]) => {
      const view = callView(call);
      const seen = `${view.state}|${view.phone ?? ''}|${users.join(',')}`;
      if (seen === last || users.length === 0) return;
      last = seen;
      this.hub.emit({ users }, 'call_update', { call: view });
    };
    update(call.keys.users);
    let hearing: unknown;
    call.watch((changed, before) => {
      const users = [...new Set([...before.users, ...changed.keys.users])];
      update(users);
      if (changed.ended) this.remember(changed.uuid, users);
      // Once Zentrale carries the call's media (or rtpengine relays it), the keys its phone presses are call_dtmf.
      const keys = changed.leg ?? relayedMedia(changed);
      if (keys && hearing !== keys) {
        hearing = keys;
        keys.onDtmf((dtmf) => {
          const payload = { call: changed.uuid, digit: dtmf.digit, duration: dtmf.durationMs };
          this.hub.emit({ users: changed.keys.users }, 'call_dtmf', payload);
        });
      }
    });
  }

  private remember(uuid: string, users: readonly string[]): void {
    this.ended.set(uuid, { users, at: this.clock.now() });
    for (const [oldest, { at }] of this.ended) {
      if (this.ended.size <= ENDED_KEEP_MAX && this.clock.now() - at < ENDED_KEEP_MS) break;
      this.ended.delete(oldest);
    }
  }
}
