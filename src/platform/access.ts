/**
 * Authentication (spec "Authentication") and the generic statuses no-session, no-auth and
 * wrong-origin, decided once for every route from its declared access level, in the order of
 * decisions.md: session -> authentication -> origin. Route handlers never repeat this.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Clock } from './clock.js';
import { ApiError, type ApiStatus, NotFoundError } from './errors.js';
import type { EventQueue } from './events/event-queue.js';

/**
 * Who may call a route: nobody in particular, any session, any authenticated session (`auth`:
 * user, partner or device), or one kind of authenticated session.
 */
export type AccessLevel = 'none' | 'session' | 'auth' | 'user' | 'partner' | 'device' | 'internal';

/** What a session is authenticated as. */
export type SessionKind = 'anonymous' | 'user' | 'partner' | 'device';

/** A live session as every route sees it. Held in memory by the node that owns it. */
export interface SessionContext {
  readonly sid: string;
  readonly did: string;
  readonly origin: string | null;
  readonly queue: EventQueue;
  kind: SessionKind;
  language: string;
  userUuid: string | null;
  partnerUuid: string | null;
  /** Name of the partner the session's user belongs to, or of the partner itself. */
  partnerName: string | null;
  deviceUuid: string | null;
  /** Milliseconds since epoch of the last call. */
  lastSeen: number;
}

export interface SessionResolver {
  /** The live session for a sid, or undefined when unknown, expired or owned by another node. */
  findBySid(sid: string): SessionContext | undefined;
  findByDid(did: string): SessionContext | undefined;
  /** True when the user holds the internal permission. */
  hasPermission(userUuid: string, permission: string): Promise<boolean>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route; every route declares it. */
    access?: AccessLevel;
    /** Internal permission needed (access 'internal'): jeye, statistics, usage, mwi, idcardcheck. */
    permission?: string;
    /** A binary download: failures answer HTTP 404 with an empty body. */
    binary?: boolean;
    /** Name of the path parameter holding the object UUID for did/dkey authentication. */
    didParam?: string;
    /** A raw upload: the body reaches the handler as a stream. */
    upload?: boolean;
    /**
     * Statuses the route answers beyond the generic ones, those its access level brings and
     * those the spec lists with the endpoint (the OpenAPI document's `status` enum).
     */
    statuses?: readonly ApiStatus[];
    /** Media type of a binary download or upload whose URL names no file extension. */
    mediaType?: string;
  }
  interface FastifyRequest {
    /** The resolved session (undefined only on access 'none' routes called without one). */
    session: SessionContext | undefined;
    /** The sid the client sent, whether known or not. */
    sentSid: string | undefined;
    /** True when that sid came as the `sid` cookie (not Bearer, not parameter). */
    sidFromCookie: boolean;
    /** The session's kind when the request arrived (to see a login happen). */
    kindAtStart: SessionKind | undefined;
  }
}

/** The sid a request carries: Bearer header, then cookie, then URL parameter. */
export function readSid(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice(7).trim() || undefined;
  const cookie = request.cookies?.sid;
  if (cookie) return cookie;
  const query = request.query as Record<string, unknown> | undefined;
  const param = query?.sid;
  return typeof param === 'string' && param !== '' ? param : undefined;
}

/** dkey = base64url(md5(lower-case object UUID + sid)), compared in constant time. */
export function checkDownloadKey(objectUuid: string, sid: string, dkey: string): boolean {
  const expected = createHash('md5')
    .update(objectUuid.toLowerCase() + sid)
    .digest();
  const given = Buffer.from(dkey, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const KIND_FOR_LEVEL: Partial<Record<AccessLevel, SessionKind>> = {
  user: 'user',
  internal: 'user',
  partner: 'partner',
  device: 'device',
};

function resolveDownload(request: FastifyRequest, resolver: SessionResolver, didParam: string) {
  const query = request.query as Record<string, unknown>;
  const params = request.params as Record<string, unknown>;
  const { did, dkey } = query;
  const objectUuid = params[didParam];
  if (typeof did !== 'string' || typeof dkey !== 'string' || typeof objectUuid !== 'string') return undefined;
  const session = resolver.findByDid(did);
  if (!session || !checkDownloadKey(objectUuid, session.sid, dkey)) return undefined;
  return session;
}

/**
 * Resolves each request's session and checks its access level; `clock` stamps the last call.
 * The check is a hook of each API route, made when the route is added, holding the route's
 * declaration: no global hook that first asks Fastify for the route's options (a getter that
 * builds an object per request) and returns at once on unknown routes. A callback hook, not an
 * async one: nearly every request passes at once, without a promise.
 */
export function registerAccess(app: FastifyInstance, resolver: SessionResolver, clock: Clock): void {
  app.decorateRequest('session', undefined);
  app.decorateRequest('sentSid', undefined);
  app.decorateRequest('sidFromCookie', false);
  app.decorateRequest('kindAtStart', undefined);

  const checkAccess = (level: AccessLevel, didParam: string | undefined): onRequestHookHandler =>
    function checkAccess(request, _reply, done) {
      const sid = readSid(request);
      request.sentSid = sid;
      request.sidFromCookie =
        sid !== undefined &&
        !request.headers.authorization?.startsWith('Bearer ') &&
        request.cookies?.sid === sid;
      let session = sid === undefined ? undefined : resolver.findBySid(sid);
      if (!session && sid === undefined && didParam) {
        session = resolveDownload(request, resolver, didParam);
        if (!session) throw new NotFoundError();
      }
      if (session) {
        session.lastSeen = clock.now();
        request.session = session;
        request.kindAtStart = session.kind;
      }
      if (level !== 'none') {
        if (!session) throw new ApiError('no-session');
        const kind = KIND_FOR_LEVEL[level];
        if (kind && session.kind !== kind) throw new ApiError('no-auth');
        if (level === 'auth' && session.kind === 'anonymous') throw new ApiError('no-auth');
      }
      // The rule covers every call of a session, also those that need none (POST /api/session).
      // Requests without an Origin header come from non-browser clients, which CSRF cannot use.
      const origin = request.headers.origin;
      if (session && origin !== undefined && origin !== session.origin) throw new ApiError('wrong-origin');
      done();
    };

  // Permissions are call-specific statuses, so they come after validation; only internal
  // routes get the check, keeping every other route's hot path free of it.
  const checkPermission = (permission: string | undefined) => async (request: FastifyRequest) => {
    const user = request.session?.userUuid;
    if (!user || !permission || !(await resolver.hasPermission(user, permission))) {
      throw new ApiError('access-denied');
    }
  };

  // Route hooks run after the global ones: the cookies are parsed by then. The check comes
  // before the route's own hooks, which may need the session (the captcha taken on sign-up).
  // Routes without an access level (the documentation's) get no check; unknown routes reach
  // the not-found handler.
  app.addHook('onRoute', (route) => {
    const level = route.config?.access;
    if (level === undefined) return;
    route.onRequest = [checkAccess(level, route.config?.didParam), ...[route.onRequest ?? []].flat()];
    if (level !== 'internal') return;
    route.preHandler = [checkPermission(route.config?.permission), ...[route.preHandler ?? []].flat()];
  });
}

/** The session of a route declared with access other than 'none'. */
export function sessionOf(request: FastifyRequest): SessionContext {
  if (!request.session) throw new ApiError('no-session');
  return request.session;
}

/** The authenticated user of a 'user' or 'internal' route. */
export function userOf(request: FastifyRequest): string {
  const user = request.session?.userUuid;
  if (!user || request.session?.kind !== 'user') throw new ApiError('no-auth');
  return user;
}

/** The authenticated partner of a 'partner' route. */
export function partnerOf(request: FastifyRequest): string {
  const partner = request.session?.partnerUuid;
  if (!partner || request.session?.kind !== 'partner') throw new ApiError('no-auth');
  return partner;
}
