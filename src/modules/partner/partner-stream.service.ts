/**
 * Spec "Partner API": partner event streams (GET/DELETE /api/partner/user/event and
 * /api/partner/cdr/event) and the CDR list of a number (GET /api/partner/cdr/{phone}).
 *
 * Streams. A partner session subscribes for `timeout` seconds (1..36000, default 3600); calling
 * again renews. While at least one session of the partner holds an unexpired subscription (on any
 * node), every observable event of the partner's users (and every CDR written for them) becomes a
 * stream event: it is stored once in `partner_stream_event` and all nodes are told over the bus.
 * A subscribing session takes its share by claiming waiting events while it polls GET /api/event:
 * the claim deletes the rows it takes in one transaction (rows locked, so two claimers never take
 * the same event) and puts them into the session's queue. So each event goes to exactly one
 * session, and the events a session does not take stay for the others.
 *
 * Dead: a subscriber is dead for the stream as soon as it does not poll. A session claims only
 * while it holds a long-poll (or polls with timeout 0), its subscription is unexpired and the
 * session lives; an expired or cancelled subscription, a deleted, closed or idle-expired session,
 * a session whose client stopped polling, and every session of a crashed node simply claim
 * nothing, and their share goes to the sessions that poll. No liveness has to be detected
 * across nodes and nothing is handed to a session that will not read it. Events nobody claims
 * within the event retention (10 minutes) are dropped, and a stream keeps at most 10,000 waiting
 * events (the oldest go first); while no session of the partner is subscribed, nothing is kept.
 */

import { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { SessionContext } from '../../platform/access.js';
import { type Clock, systemClock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub, EventTarget } from '../../platform/events/event-hub.js';
import { EVENT_BATCH_MAX, EVENT_RETAIN_SECONDS, type EventQueue } from '../../platform/events/event-queue.js';
import { newUuid, uuidSortKey } from '../../platform/ids.js';
import type { Cdr, CdrService } from '../cdr/index.js';
import type { PhoneService } from '../phone/index.js';
import type { UserService } from '../user/index.js';
import type { PartnerApiService } from './partner-api.service.js';
import type { StreamKind } from './partner-stream.repository.js';
import * as repo from './partner-stream.repository.js';
import { CDR_PAGE, type ListPartnerCdrQuery } from './partner-stream.schema.js';

export type { StreamKind } from './partner-stream.repository.js';

export interface PartnerStreamDeps {
  db: Db;
  writer: Writer;
  hub: EventHub;
  partnerApi: Pick<PartnerApiService, 'hasRight'>;
  users: Pick<UserService, 'findUser'>;
  phones: Pick<PhoneService, 'findNumber'>;
  cdrs: Pick<CdrService, 'onRecorded' | 'streamCdrs'>;
  log: FastifyBaseLogger;
  /** The wall clock (tests set their own). */
  clock?: Clock;
}

/** Spec "Partner API": the user events a partner observes (conference_* by prefix). */
export const OBSERVABLE_USER_EVENTS = [
  'call_update',
  'call_dtmf',
  'call_collect',
  'sip_register',
  'sip_unregister',
  'fax_convert',
  'fax_report',
  'dialplan_callreverse_start',
  'dialplan_callreverse_stop',
] as const;
const OBSERVABLE = new Set<string>(OBSERVABLE_USER_EVENTS);

/** The event of the CDR stream. */
export const CDR_EVENT = 'cdr_new';
/** Waiting events one stream keeps at most. */
export const STREAM_PENDING_MAX = 10_000;
const CLAIM_CONTROL = 'partner_stream';
const PRUNE_INTERVAL_MS = 60_000;

export function isObservableUserEvent(event: string): boolean {
  return OBSERVABLE.has(event) || event.startsWith('conference_');
}

interface LocalSubscription {
  partner: string;
  expires: number;
}

/** The CDR as the spec shows it (owner and partner are Zentrale's own bookkeeping). */
function cdrView(cdr: Cdr): Omit<Cdr, 'owner' | 'partner'> {
  const { owner: _owner, partner: _partner, ...view } = cdr;
  return view;
}

/**
 * The user's event as the partner sees it: the payload plus `user`, the user's UUID. The SIP
 * events name the SIP account in `user`; for the partner it moves to `sip`.
 */
function userEventPayload(event: string, user: string, payload: Record<string, unknown>) {
  if (event === 'sip_register' || event === 'sip_unregister') {
    const { user: account, ...rest } = payload;
    return { ...rest, sip: account, user };
  }
  return { ...payload, user };
}

export class PartnerStreamService {
  /** This node's subscribing sessions: did -> stream -> subscription. */
  private readonly local = new Map<string, Map<StreamKind, LocalSubscription>>();
  /** Publishing in emit order. */
  private publishing: Promise<void> = Promise.resolve();
  /** Claims of one session one after the other, so its events keep their order. */
  private readonly claiming = new Map<string, Promise<void>>();
  private rotation = 0;
  private pruneTimer: NodeJS.Timeout | undefined;

  private readonly clock: Clock;

  constructor(private readonly deps: PartnerStreamDeps) {
    this.clock = deps.clock ?? systemClock;
    deps.hub.observe((target, event, payload) => this.observe(target, event, payload));
    // Only this node's subscribers claim; every other poll passes at no cost.
    deps.hub.onPoll((queue) => (this.local.has(queue.did) ? this.claim(queue.did) : Promise.resolve()));
    deps.hub.onControl((name, payload) => {
      if (name === CLAIM_CONTROL && typeof payload.partner === 'string') this.wake(payload.partner);
    });
    deps.cdrs.onRecorded((w, cdr) => {
      const partner = cdr.partner;
      if (partner === undefined) return;
      const payload = { cdr: cdrView(cdr), ...(cdr.owner === undefined ? {} : { user: cdr.owner }) };
      w.afterCommit(() => this.enqueue(() => this.publish(partner, 'cdr', [{ name: CDR_EVENT, payload }])));
    });
  }

  /** Takes back this node's subscriptions after a restart and starts the pruning. */
  async start(): Promise<void> {
    for (const row of await repo.listLiveSubscriptions(this.deps.db, this.clock.now())) {
      if (this.deps.hub.queueOf(row.did))
        this.remember(row.did, row.stream as StreamKind, row.partner, row.expires);
    }
    this.pruneTimer = setInterval(() => {
      this.prune().catch((error: unknown) =>
        this.deps.log.warn({ err: error }, 'partner stream prune failed'),
      );
    }, PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  stop(): void {
    if (this.pruneTimer) clearInterval(this.pruneTimer);
  }

  /** Resolves once the events observed so far are published (tests, stop). */
  async idle(): Promise<void> {
    let last: Promise<void> | undefined;
    while (last !== this.publishing) {
      last = this.publishing;
      await last;
    }
  }

  /** GET /api/partner/{user,cdr}/event: subscribes or renews for `timeout` seconds. */
  async subscribe(session: SessionContext, stream: StreamKind, timeout: number): Promise<void> {
    const partner = await this.requireStreamAccess(session, stream);
    const expires = this.clock.now() + timeout * 1000;
    await this.deps.writer.write(({ trx }) =>
      repo.upsertSubscription(trx, { did: session.did, stream, partner, expires }),
    );
    this.remember(session.did, stream, partner, expires);
  }

  /** DELETE /api/partner/{user,cdr}/event: the session's share goes to the other subscribers. */
  async unsubscribe(session: SessionContext, stream: StreamKind): Promise<void> {
    await this.requireStreamAccess(session, stream);
    await this.deps.writer.write(({ trx }) => repo.deleteSubscription(trx, session.did, stream));
    const streams = this.local.get(session.did);
    streams?.delete(stream);
    if (streams?.size === 0) this.local.delete(session.did);
  }

  /**
   * GET /api/partner/cdr/{phone}: the page as JSON text, written while the records are read
   * (CdrService.streamCdrs reads 500 at a time), so that 5000 records take no more memory than
   * 500. Everything that can fail with a status is checked before the first byte.
   */
  async cdrListing(partner: string, phone: string, query: ListPartnerCdrQuery): Promise<Readable> {
    if (!(await this.deps.partnerApi.hasRight(partner, 'cdr')))
      throw new ApiError('access-denied', 'the partner has no right to read CDRs');
    const number = await this.deps.phones.findNumber(phone);
    const holder = number?.user ? await this.deps.users.findUser(number.user) : undefined;
    if (!holder || holder.partner_uuid !== partner)
      throw new ApiError('wrong-phone', "not a number of the partner's users");
    if (query.from !== undefined && query.to !== undefined && query.from > query.to)
      throw new ApiError('wrong-syntax', 'from must not be after to');
    const records = this.deps.cdrs
      .streamCdrs({ phone, partner }, { ...query, count: query.count ?? CDR_PAGE.default })
      [Symbol.asyncIterator]();
    const first = await records.next();
    async function* chunks(): AsyncGenerator<string> {
      let chunk = '{"status":"ok","cdr":[';
      let current = first;
      let count = 0;
      while (!current.done) {
        chunk += (count > 0 ? ',' : '') + JSON.stringify(cdrView(current.value));
        count += 1;
        if (count % 100 === 0) {
          yield chunk;
          chunk = '';
        }
        current = await records.next();
      }
      yield `${chunk}]}`;
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  /** The partner of a partner session; the CDR stream needs the right `cdr` (access-denied). */
  private async requireStreamAccess(session: SessionContext, stream: StreamKind): Promise<string> {
    const partner = session.partnerUuid;
    if (session.kind !== 'partner' || !partner) throw new ApiError('no-auth');
    if (stream === 'cdr' && !(await this.deps.partnerApi.hasRight(partner, 'cdr')))
      throw new ApiError('access-denied', 'the partner has no right to read CDRs');
    return partner;
  }

  private remember(did: string, stream: StreamKind, partner: string, expires: number): void {
    let streams = this.local.get(did);
    if (!streams) {
      streams = new Map();
      this.local.set(did, streams);
    }
    streams.set(stream, { partner, expires });
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const done = this.publishing.then(work);
    this.publishing = done.catch((error: unknown) =>
      this.deps.log.error({ err: error }, 'partner stream event not published'),
    );
    return this.publishing;
  }

  /** An event of the EventHub: observable user events go to the users' partners' streams. */
  private observe(target: EventTarget, event: string, payload: Record<string, unknown>): void {
    if (!isObservableUserEvent(event) || !target.users?.length) return;
    const users = [...target.users];
    void this.enqueue(async () => {
      const byPartner = new Map<string, { name: string; payload: Record<string, unknown> }[]>();
      for (const user of users) {
        const partner = (await this.deps.users.findUser(user))?.partner_uuid;
        if (!partner) continue;
        const list = byPartner.get(partner) ?? [];
        list.push({ name: event, payload: userEventPayload(event, user, payload) });
        byPartner.set(partner, list);
      }
      for (const [partner, events] of byPartner) await this.publish(partner, 'user', events);
    });
  }

  /** Stores the events for the partner's subscribers (none subscribed: nothing) and wakes them. */
  private async publish(
    partner: string,
    stream: StreamKind,
    events: readonly { name: string; payload: Record<string, unknown> }[],
  ): Promise<void> {
    const { db, hub, writer } = this.deps;
    const now = this.clock.now();
    if (!(await repo.hasSubscriber(db, partner, stream, now))) return;
    const rows = events.map(({ name, payload }) => {
      const id = newUuid();
      return {
        id,
        partner,
        stream,
        sort_key: uuidSortKey(id),
        name,
        payload: JSON.stringify(payload),
        created: now,
      };
    });
    await writer.writeStatement((w) => repo.insertStreamEvents(w.trx, rows));
    await hub.control(CLAIM_CONTROL, { partner });
  }

  /** On every node: the partner's sessions here that hold a long-poll claim, in turns. */
  private wake(partner: string): void {
    const waiting: string[] = [];
    for (const [did, streams] of this.local) {
      if (![...streams.values()].some((s) => s.partner === partner)) continue;
      if ((this.deps.hub.queueOf(did)?.waiting ?? 0) > 0) waiting.push(did);
    }
    if (waiting.length === 0) return;
    // Whoever is first gets what waits; turning the order spreads the stream over the sessions.
    this.rotation = (this.rotation + 1) % waiting.length;
    const ordered = [...waiting.slice(this.rotation), ...waiting.slice(0, this.rotation)];
    void (async () => {
      for (const did of ordered) await this.claim(did);
    })();
  }

  /** The session claims waiting events of its live subscriptions (one claim at a time per session). */
  private claim(did: string): Promise<void> {
    const before = this.claiming.get(did) ?? Promise.resolve();
    const done = before
      .then(() => this.claimNow(did))
      .catch((error: unknown) => this.deps.log.error({ err: error }, 'partner stream claim failed'));
    this.claiming.set(did, done);
    void done.then(() => {
      if (this.claiming.get(did) === done) this.claiming.delete(did);
    });
    return done;
  }

  private async claimNow(did: string): Promise<void> {
    const streams = this.local.get(did);
    const queue = this.deps.hub.queueOf(did);
    if (!streams) return;
    if (!queue) {
      this.local.delete(did);
      return;
    }
    const now = this.clock.now();
    const live = [...streams].filter(([, s]) => s.expires > now);
    const partner = live[0]?.[1].partner;
    if (!partner) return;
    const names = queue.filter ? [...queue.filter] : undefined;
    if (names?.length === 0) return;
    const claimed = await this.deps.writer.write(async ({ trx }) => {
      const rows = await repo.lockStreamEvents(
        trx,
        partner,
        live.map(([stream]) => stream),
        names,
        EVENT_BATCH_MAX,
      );
      await repo.deleteStreamEvents(
        trx,
        rows.map((row) => row.id),
      );
      return rows;
    });
    if (claimed.length === 0) return;
    claimed.sort((a, b) => (a.sort_key < b.sort_key ? -1 : 1));
    const target: EventQueue | undefined = this.deps.hub.queueOf(did);
    if (!target) {
      // The session ended during the claim: the events go back for the others.
      await this.deps.writer.writeStatement((w) => repo.insertStreamEvents(w.trx, claimed));
      return;
    }
    for (const row of claimed) this.deps.hub.emitLocal(did, row.name, JSON.parse(row.payload));
  }

  /** Drops what nobody claimed within the retention, crowded streams' oldest, ended subscriptions. */
  async prune(): Promise<void> {
    const now = this.clock.now();
    await this.deps.writer.write(async (w) => {
      await repo.deleteOldStreamEvents(w.trx, now - EVENT_RETAIN_SECONDS * 1000);
      for (const { partner, stream } of await repo.listCrowdedStreams(w.trx, STREAM_PENDING_MAX)) {
        const from = await repo.keepFrom(w.trx, partner, stream, STREAM_PENDING_MAX);
        if (from) await repo.deleteStreamEventsBefore(w.trx, partner, stream, from);
      }
      await repo.deleteEndedSubscriptions(w.trx, now);
    });
    for (const [did, streams] of this.local) {
      for (const [stream, s] of streams) if (s.expires <= now) streams.delete(stream);
      if (streams.size === 0 || !this.deps.hub.queueOf(did)) this.local.delete(did);
    }
  }
}
