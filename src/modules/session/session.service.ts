/**
 * Sessions (spec "Session and sign-up", "Authentication", decisions.md "Sessions").
 *
 * Each session lives on the node that created it, so that node holds it in memory and answers
 * every call from there; the database keeps a copy so that sessions survive a restart. The
 * sid is never stored: it is an HMAC of the did under a key kept in DATA_DIR, so a copy of the
 * database alone does not let anyone act as a session, and the node can still recompute every
 * sid after a restart (and check download keys, which hash the sid).
 */
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { SessionContext, SessionKind, SessionResolver } from '../../platform/access.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import {
  EVENT_RETAIN_COUNT,
  EVENT_RETAIN_SECONDS,
  EventQueue,
  type SessionEvent,
} from '../../platform/events/event-queue.js';
import type { EventStore } from '../../platform/events/event-store.js';
import { randomToken } from '../../platform/ids.js';
import type { Throttle } from '../../platform/throttle/throttle.js';
import type { PartnerService } from '../partner/index.js';
import type { UserService } from '../user/index.js';
import * as repo from './session.repository.js';
import { missingCredential, type PostSessionBody, type SessionObject } from './session.schema.js';

export interface SessionServiceDeps {
  db: Db;
  /** Every write goes through it (the platform's unit of work). */
  writer: Writer;
  hub: EventHub;
  events: EventStore;
  config: Config;
  users: UserService;
  partners: PartnerService;
  throttle: Throttle;
  log: FastifyBaseLogger;
  /** The wall clock (idle expiry, activity stamps, event retention). */
  clock: Clock;
}

/** Where a new session comes from. */
export interface SessionOrigin {
  address: string;
  origin: string | null;
  language: string;
}

interface LiveSession extends SessionContext {
  created: number;
  address: string;
}

const FLUSH_INTERVAL_MS = 60_000;
const CLOSE_USER_SESSIONS = 'close_user_sessions';
const CLOSE_DEVICE_SESSIONS = 'close_device_sessions';

/** Called when a session of this node ends (closed, expired, replaced, moved to a new sid). */
export type SessionClosedListener = (session: SessionContext) => void;

function principals(session: SessionContext): string[] {
  const id =
    session.kind === 'partner'
      ? session.partnerUuid
      : session.kind === 'device'
        ? session.deviceUuid
        : session.userUuid;
  return id ? [id] : [];
}

/**
 * A session's queue after a restart: ids go on after the highest stored one (or the saved
 * next_event); of the stored events only the contiguous newest run is kept (a batch that
 * failed to store leaves a hole, and the reader relies on contiguous ids).
 */
function restoreQueue(nextEvent: number, stored: SessionEvent[], clock: Clock): EventQueue {
  let start = Math.max(0, stored.length - 1);
  while (start > 0 && stored[start - 1]!.id === stored[start]!.id - 1) start -= 1;
  const events = stored.slice(start);
  const last = events.at(-1);
  return new EventQueue(Math.max(nextEvent, last ? last.id + 1 : 0), events, clock);
}

/** Which of the three login bodies was sent, and that it is complete (missing-element). */
function requireCredentialFields(body: PostSessionBody): void {
  const missing = missingCredential(body);
  if (missing !== undefined) throw new ApiError('missing-element', `missing ${missing}`);
}

export class SessionService implements SessionResolver {
  private readonly bySid = new Map<string, LiveSession>();
  private readonly byDid = new Map<string, LiveSession>();
  private readonly newSessions = new Map<string, { minute: number; count: number }>();
  private secret: Buffer = Buffer.alloc(0);
  private flushTimer: NodeJS.Timeout | undefined;
  private lastFlush: number;
  private readonly closedListeners: SessionClosedListener[] = [];

  constructor(private readonly deps: SessionServiceDeps) {
    this.lastFlush = deps.clock.now();
    deps.hub.onControl((name, payload) => {
      const keep = typeof payload.keep === 'string' ? payload.keep : undefined;
      if (name === CLOSE_USER_SESSIONS && typeof payload.user === 'string')
        this.closeLocalSessionsOf(payload.user, keep);
      if (name === CLOSE_DEVICE_SESSIONS && typeof payload.device === 'string')
        this.closeLocalDeviceSessions(payload.device, keep);
    });
  }

  /** Registers a listener for sessions of this node that end (the device protocol's tasks). */
  onSessionClosed(listener: SessionClosedListener): void {
    this.closedListeners.push(listener);
  }

  /** Loads this node's sessions and starts the activity flush and idle expiry. */
  async start(): Promise<void> {
    this.secret = this.loadSecret();
    const { db, config } = this.deps;
    const cutoff = this.deps.clock.now() - config.sessionIdleTimeout * 1000;
    await this.deps.writer.writeStatement((w) => repo.deleteIdleSessions(w.trx, config.publicUrl, cutoff));
    await this.pruneEvents();
    const rows = await repo.listLiveSessions(db, config.publicUrl, cutoff);
    const stored = await this.deps.events.load(
      rows.map((row) => row.did),
      this.deps.clock.now() - EVENT_RETAIN_SECONDS * 1000,
    );
    for (const row of rows) {
      this.register({
        sid: this.sidFor(row.did),
        did: row.did,
        origin: row.origin,
        queue: restoreQueue(Number(row.next_event), stored.get(row.did) ?? [], this.deps.clock),
        kind: row.kind as SessionKind,
        language: row.language,
        userUuid: row.user_uuid,
        partnerUuid: row.partner_uuid,
        partnerName: row.partner_uuid
          ? ((await this.deps.partners.findPartner(row.partner_uuid))?.name ?? null)
          : null,
        deviceUuid: row.device_uuid,
        lastSeen: row.last_seen,
        created: row.created,
        address: row.address,
      });
    }
    this.lastFlush = this.deps.clock.now();
    this.flushTimer = setInterval(() => {
      this.flushActivity().catch((error: unknown) =>
        this.deps.log.error({ err: error }, 'session flush failed'),
      );
    }, FLUSH_INTERVAL_MS);
    this.flushTimer.unref();
  }

  /** Answers pending long-polls. */
  releaseWaiters(): void {
    for (const session of this.bySid.values()) session.queue.releaseWaiters();
  }

  /** Stores the events still in flight, answers pending long-polls, saves activity times. */
  async stop(): Promise<void> {
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.deps.events.idle();
    this.releaseWaiters();
    const sessions = [...this.bySid.values()];
    await this.deps.writer.write(async (w) => {
      for (const session of sessions) {
        await repo.updateSession(w.trx, session.did, {
          last_seen: session.lastSeen,
          next_event: session.queue.nextVisible,
        });
      }
    });
  }

  get count(): number {
    return this.bySid.size;
  }

  findBySid(sid: string): SessionContext | undefined {
    return this.live(this.bySid.get(sid));
  }

  findByDid(did: string): SessionContext | undefined {
    return this.live(this.byDid.get(did));
  }

  hasPermission(userUuid: string, permission: string): Promise<boolean> {
    return this.deps.users.hasPermission(userUuid, permission);
  }

  /** The session object of the spec. */
  describe(session: SessionContext): SessionObject {
    const answer: SessionObject = {
      sid: session.sid,
      did: session.did,
      server: this.deps.config.publicUrl,
      auth: session.kind !== 'anonymous',
      // decisions.md "Events": the id the next event will get (events being stored count).
      next_event: session.queue.nextId,
    };
    if (session.partnerName) answer.partner = session.partnerName;
    return answer;
  }

  /** A new unauthenticated session; resource-throttle beyond SESSION_RATE_LIMIT a minute. */
  async createSession(from: SessionOrigin): Promise<SessionContext> {
    this.countNewSession(from.address);
    const did = randomToken(24);
    const now = this.deps.clock.now();
    const session: LiveSession = {
      sid: this.sidFor(did),
      did,
      origin: from.origin,
      queue: new EventQueue(0, [], this.deps.clock),
      kind: 'anonymous',
      language: from.language,
      userUuid: null,
      partnerUuid: null,
      partnerName: null,
      deviceUuid: null,
      lastSeen: now,
      created: now,
      address: from.address,
    };
    await this.deps.writer.writeStatement((w) =>
      repo.insertSession(w.trx, {
        did,
        server: this.deps.config.publicUrl,
        kind: session.kind,
        user_uuid: null,
        partner_uuid: null,
        device_uuid: null,
        language: session.language,
        origin: session.origin,
        address: session.address,
        created: now,
        last_seen: now,
        next_event: 0,
      }),
    );
    this.register(session);
    return session;
  }

  async setLanguage(session: SessionContext, language: string): Promise<void> {
    if (session.language === language) return;
    session.language = language;
    await this.deps.writer.writeStatement((w) => repo.updateSession(w.trx, session.did, { language }));
  }

  /**
   * POST /api/session: user, partner or partner-proxy login. Without a session only a user
   * login (direct or by proxy) is possible, and it creates an authenticated session.
   */
  async authenticate(
    session: SessionContext | undefined,
    body: PostSessionBody,
    from: SessionOrigin,
  ): Promise<{ session: SessionContext; created: boolean }> {
    requireCredentialFields(body);
    if (session && session.kind !== 'anonymous') throw new ApiError('already-auth');
    const identity = await this.checkCredentials(session, body, from.address);
    const created = session === undefined;
    const target = session ?? (await this.createSession(from));
    await this.bind(target, identity);
    return { session: target, created };
  }

  /** Makes a session authenticated as a user (sign-up, password recovery, login). */
  async authenticateUser(session: SessionContext, userUuid: string): Promise<void> {
    const user = await this.deps.users.findUser(userUuid);
    if (!user) throw new ApiError('wrong-user');
    const partner = user.partner_uuid ? await this.deps.partners.findPartner(user.partner_uuid) : undefined;
    await this.bind(session, {
      kind: 'user',
      userUuid,
      partnerUuid: partner?.uuid ?? null,
      partnerName: partner?.name ?? null,
    });
  }

  /** Makes a session a device session (device protocol). */
  async authenticateDevice(session: SessionContext, deviceUuid: string): Promise<void> {
    await this.bind(session, {
      kind: 'device',
      userUuid: null,
      partnerUuid: null,
      partnerName: null,
      deviceUuid,
    });
  }

  /**
   * Moves a session to a new sid (and did); the old sid stops working at once. Used when a
   * session whose sid came as a cookie becomes authenticated: whoever planted that sid in a
   * browser (GET /api/session?sid=S sets the cookie) does not own the account afterwards.
   * The copy comes first, so that a crash between the two leaves a working session; the events
   * in flight are stored before they move (the event store writes on its own, after the copy).
   */
  async renewSid(session: SessionContext): Promise<SessionContext> {
    const old = session as LiveSession;
    const did = randomToken(24);
    const renewed: LiveSession = { ...old, did, sid: this.sidFor(did) };
    const { writer } = this.deps;
    await writer.writeStatement((w) => repo.copySession(w.trx, old.did, did));
    await this.deps.events.idle();
    await writer.write(async (w) => {
      await repo.moveSessionEvents(w.trx, old.did, did);
      await repo.deleteSession(w.trx, old.did);
    });
    this.unregister(old);
    this.register(renewed);
    return renewed;
  }

  /** DELETE /api/session and idle expiry: the sid stops working at once. */
  async closeSession(session: SessionContext): Promise<void> {
    this.unregister(session);
    session.queue.releaseWaiters();
    await this.deps.writer.writeStatement((w) => repo.deleteSession(w.trx, session.did));
  }

  /**
   * Closes every session of a user on every node (account deleted or disabled, password
   * changed or reset): their sids stop working at once and their held long-polls answer.
   * `keepDid` names the session that changed the password: it stays.
   */
  async closeUserSessions(userUuid: string, keepDid?: string): Promise<void> {
    await this.deps.hub.control(
      CLOSE_USER_SESSIONS,
      keepDid ? { user: userUuid, keep: keepDid } : { user: userUuid },
    );
    await this.deps.writer.writeStatement((w) => repo.deleteUserSessions(w.trx, userUuid, keepDid));
  }

  /**
   * Device API: a new device session closes the device's other sessions, on every node;
   * `keepDid` names the new one.
   */
  async closeDeviceSessions(deviceUuid: string, keepDid: string): Promise<void> {
    await this.deps.hub.control(CLOSE_DEVICE_SESSIONS, { device: deviceUuid, keep: keepDid });
    await this.deps.writer.write(async (w) => {
      for (const row of await repo.listDeviceSessions(w.trx, deviceUuid))
        if (row.did !== keepDid) await repo.deleteSession(w.trx, row.did);
    });
  }

  private closeLocalDeviceSessions(deviceUuid: string, keepDid?: string): void {
    for (const session of [...this.bySid.values()]) {
      if (session.deviceUuid !== deviceUuid || session.did === keepDid) continue;
      this.unregister(session);
      session.queue.releaseWaiters();
    }
  }

  private closeLocalSessionsOf(userUuid: string, keepDid?: string): void {
    for (const session of [...this.bySid.values()]) {
      if (session.userUuid !== userUuid || session.did === keepDid) continue;
      this.unregister(session);
      session.queue.releaseWaiters();
    }
  }

  /**
   * Closes this node's sessions whose stored row another process deleted: the operator tool
   * disabling or deleting a user, where no message bus reaches this node (SQLite).
   */
  private async closeSessionsClosedElsewhere(): Promise<void> {
    // A session is registered once its row is stored: each of these has one unless deleted.
    const registered = [...this.bySid.values()];
    const stored = new Set(await repo.listSessionIds(this.deps.db, this.deps.config.publicUrl));
    for (const session of registered) {
      if (stored.has(session.did) || !this.bySid.has(session.sid)) continue;
      this.unregister(session);
      session.queue.releaseWaiters();
    }
  }

  /** Writes the activity times of sessions used since the last flush; expires idle ones. */
  async flushActivity(): Promise<void> {
    const since = this.lastFlush;
    this.lastFlush = this.deps.clock.now();
    const cutoff = this.deps.clock.now() - this.deps.config.sessionIdleTimeout * 1000;
    const touched: LiveSession[] = [];
    for (const session of this.bySid.values()) {
      if (session.lastSeen <= cutoff) this.unregister(session);
      else if (session.lastSeen > since) touched.push(session);
    }
    this.newSessions.clear();
    const { writer, config } = this.deps;
    // Activity first, so that a session used since its row was last written is not idle there.
    if (touched.length > 0) {
      await writer.write(async (w) => {
        for (const session of touched)
          await repo.updateSession(w.trx, session.did, { last_seen: session.lastSeen });
      });
    }
    await writer.writeStatement((w) => repo.deleteIdleSessions(w.trx, config.publicUrl, cutoff));
    await this.closeSessionsClosedElsewhere();
    await this.pruneEvents();
  }

  /**
   * Drops stored events past the retention (and those of ended sessions). `next_event` in the
   * session row is raised past every stored id first, so that the ids stay used after their
   * events are gone.
   */
  private async pruneEvents(): Promise<void> {
    const { writer, events } = this.deps;
    const before = this.deps.clock.now() - EVENT_RETAIN_SECONDS * 1000;
    await writer.write(async (w) => {
      await repo.raiseNextEvent(w.trx);
      await repo.deleteOldSessionEvents(w.trx, before, EVENT_RETAIN_COUNT);
    });
    await events.pruneBodies(before);
  }

  /**
   * Checks the credentials (README "How the API behaves"). Wrong ones count against the
   * client address (resource-throttle for that address beyond its limit) and against the
   * account: the user, whether named by user name or e-mail, or the partner, or the name
   * itself when nobody has it. An account beyond its limit backs off (one attempt per period,
   * resource-throttle in between) rather than locking, and not at all for a known client (an
   * address that logged in to it before), so that guessing cannot lock its owner out.
   */
  private async checkCredentials(
    session: SessionContext | undefined,
    body: PostSessionBody,
    address: string,
  ) {
    const { throttle } = this.deps;
    const account = await this.loginAccount(body);
    const client = `${account} ${address}`;
    await throttle.check('login-address', address);
    if (!(await throttle.isKnownClient(client))) await throttle.checkBackOff('login-account', account);
    try {
      const identity = await this.verifyLogin(session, body);
      await throttle.clear('login-account', account);
      await throttle.rememberClient(client);
      return identity;
    } catch (error) {
      if (error instanceof ApiError && error.status === 'wrong-credentials') {
        await throttle.fail('login-address', address);
        await throttle.fail('login-account', account, { sliding: true });
      }
      throw error;
    }
  }

  /** What wrong logins count against: the partner, the user (by UUID) or the unknown name. */
  private async loginAccount(body: PostSessionBody): Promise<string> {
    if (body.partner !== undefined) return `partner:${body.partner.toLowerCase()}`;
    const user = await this.deps.users.findUserByLogin({ username: body.username, email: body.email });
    if (user) return `user:${user.uuid}`;
    return `name:${(body.username ?? body.email ?? '').toLowerCase()}`;
  }

  private async verifyLogin(session: SessionContext | undefined, body: PostSessionBody) {
    const { users, partners } = this.deps;
    if (body.partner !== undefined && body.key !== undefined) {
      if (body.user === undefined && !session) throw new ApiError('no-session');
      const partner = await partners.verifyPartner(body.partner, body.key);
      if (!partner) throw new ApiError('wrong-credentials');
      if (body.user === undefined) {
        return {
          kind: 'partner' as const,
          userUuid: null,
          partnerUuid: partner.uuid,
          partnerName: partner.name,
        };
      }
      const user = await users.findUser(body.user);
      if (!user || user.partner_uuid !== partner.uuid || user.disabled) throw new ApiError('wrong-user');
      return {
        kind: 'user' as const,
        userUuid: user.uuid,
        partnerUuid: partner.uuid,
        partnerName: partner.name,
      };
    }
    const user = await users.verifyCredentials(
      { username: body.username, email: body.email },
      body.password ?? '',
    );
    if (!user) throw new ApiError('wrong-credentials');
    const partner = user.partner_uuid ? await partners.findPartner(user.partner_uuid) : undefined;
    return {
      kind: 'user' as const,
      userUuid: user.uuid,
      partnerUuid: partner?.uuid ?? null,
      partnerName: partner?.name ?? null,
    };
  }

  private async bind(
    session: SessionContext,
    identity: {
      kind: SessionKind;
      userUuid: string | null;
      partnerUuid: string | null;
      partnerName: string | null;
      deviceUuid?: string | null;
    },
  ): Promise<void> {
    await this.deps.writer.writeStatement((w) =>
      repo.updateSession(w.trx, session.did, {
        kind: identity.kind,
        user_uuid: identity.userUuid,
        partner_uuid: identity.partnerUuid,
        device_uuid: identity.deviceUuid ?? null,
      }),
    );
    this.deps.hub.detach(session.did, session.queue, principals(session));
    session.kind = identity.kind;
    session.userUuid = identity.userUuid;
    session.partnerUuid = identity.partnerUuid;
    session.partnerName = identity.partnerName;
    session.deviceUuid = identity.deviceUuid ?? null;
    this.deps.hub.attach(session.did, session.queue, principals(session));
  }

  private live(session: LiveSession | undefined): SessionContext | undefined {
    if (!session) return undefined;
    if (session.lastSeen <= this.deps.clock.now() - this.deps.config.sessionIdleTimeout * 1000) {
      this.unregister(session);
      return undefined;
    }
    return session;
  }

  private register(session: LiveSession): void {
    this.bySid.set(session.sid, session);
    this.byDid.set(session.did, session);
    this.deps.hub.attach(session.did, session.queue, principals(session));
  }

  private unregister(session: SessionContext): void {
    const known = this.bySid.delete(session.sid);
    this.byDid.delete(session.did);
    this.deps.hub.detach(session.did, session.queue, principals(session));
    if (known) for (const listener of this.closedListeners) listener(session);
  }

  private countNewSession(address: string): void {
    const limit = this.deps.config.sessionRateLimit;
    if (limit === 0) return;
    const minute = Math.floor(this.deps.clock.now() / 60_000);
    const entry = this.newSessions.get(address);
    if (!entry || entry.minute !== minute) {
      this.newSessions.set(address, { minute, count: 1 });
      return;
    }
    if (entry.count >= limit) throw new ApiError('resource-throttle', 'too many new sessions');
    entry.count += 1;
  }

  private sidFor(did: string): string {
    return createHmac('sha256', this.secret).update(did).digest('base64url');
  }

  private loadSecret(): Buffer {
    const file = path.join(this.deps.config.dataDir, 'session.key');
    fs.mkdirSync(this.deps.config.dataDir, { recursive: true });
    try {
      return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex');
    } catch {
      const secret = randomBytes(32);
      fs.writeFileSync(file, secret.toString('hex'), { mode: 0o600, flag: 'wx' });
      return secret;
    }
  }
}
