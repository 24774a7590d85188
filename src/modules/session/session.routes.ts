/** Routes of spec "Session and sign-up": GET, POST and DELETE /api/session. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/errors.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  GetSessionAnswer,
  GetSessionQuery,
  missingCredential,
  PostSessionAnswer,
  PostSessionBody,
} from './session.schema.js';
import type { SessionOrigin, SessionService } from './session.service.js';

function originOf(request: FastifyRequest, language: string | undefined): SessionOrigin {
  return { address: request.ip, origin: request.headers.origin ?? null, language: language ?? 'de' };
}

export function sessionRoutes(app: AppInstance, sessions: SessionService, publicUrl: string): void {
  const secure = publicUrl.startsWith('https:');
  const setCookies = (reply: FastifyReply, sid: string) => {
    reply.setCookie('sid', sid, { path: '/', httpOnly: true, sameSite: 'lax', secure });
    reply.setCookie('server', publicUrl, { path: '/', sameSite: 'lax', secure });
  };

  // Session fixation: a cookie session that became authenticated in this call (login, sign-up,
  // password recovery) moves to a new sid. Bearer and parameter clients chose their sid and
  // keep it, as spec clients expect no new sid from POST /api/session on a session.
  // A callback hook: nearly every request passes at once, without a promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    const session = request.session;
    if (
      !session ||
      !request.sidFromCookie ||
      request.kindAtStart !== 'anonymous' ||
      session.kind === 'anonymous'
    ) {
      done(null, payload);
      return;
    }
    sessions.renewSid(session).then((renewed) => {
      request.session = renewed;
      setCookies(reply, renewed.sid);
      done(null, payload);
    }, done);
  });

  app.get(
    '/api/session',
    {
      config: { access: 'none' },
      schema: {
        summary: 'Create a session, or re-use the one whose sid is sent',
        tags: ['session'],
        querystring: GetSessionQuery,
        response: { 200: GetSessionAnswer },
      },
    },
    async (request, reply) => {
      const { language } = request.query;
      let session = request.session;
      if (!session && request.sentSid !== undefined) {
        reply.clearCookie('sid', { path: '/' }).clearCookie('server', { path: '/' });
        throw new ApiError('wrong-session', 'unknown session');
      }
      if (session) {
        if (language) await sessions.setLanguage(session, language);
        // A browser that re-uses its session by URL parameter gets the cookies; a client that
        // sends a Bearer header does not use cookies, so they are not re-sent on every call.
        if (!request.headers.authorization && request.cookies.sid !== session.sid)
          setCookies(reply, session.sid);
      } else {
        session = await sessions.createSession(originOf(request, language));
        setCookies(reply, session.sid);
      }
      return sessions.describe(session);
    },
  );

  app.post(
    '/api/session',
    {
      config: { access: 'none', requires: missingCredential },
      schema: {
        summary: 'Authenticate as a user, a partner, or a partner acting for one of its users',
        tags: ['session'],
        body: PostSessionBody,
        response: { 200: PostSessionAnswer },
      },
    },
    async (request, reply) => {
      if (!request.session && request.sentSid !== undefined) throw new ApiError('no-session');
      const { session, created } = await sessions.authenticate(
        request.session,
        request.body,
        originOf(request, undefined),
      );
      if (created) {
        setCookies(reply, session.sid);
        return sessions.describe(session);
      }
      return session.kind === 'user' && session.partnerName ? { partner: session.partnerName } : {};
    },
  );

  app.delete(
    '/api/session',
    {
      config: { access: 'session' },
      schema: { summary: 'Close the session', tags: ['session'], response: { 200: Empty } },
    },
    async (request, reply) => {
      await sessions.closeSession(request.session!);
      reply.clearCookie('sid', { path: '/' });
      return {};
    },
  );
}
