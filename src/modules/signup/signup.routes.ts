/**
 * Routes of spec "Session and sign-up": the captcha image, the verification calls, POST
 * /api/signup/user, and password recovery. They need a session but no authentication.
 */
import type { FastifyRequest } from 'fastify';
import { sessionOf } from '../../platform/access.js';
import { missingLogin, present } from '../../platform/alternatives.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import type { CaptchaService, PendingCaptcha } from './captcha.service.js';
import type { RecoveryService } from './recovery.service.js';
import {
  CaptchaParams,
  GetVerificationAnswer,
  PostPasswordAnswer,
  PostPasswordBody,
  PostRecoveryBody,
  PostSignupUserBody,
  PostVerificationAnswer,
  PostVerificationBody,
  VerificationParams,
} from './signup.schema.js';
import type { SignupService } from './signup.service.js';

export interface SignupRouteServices {
  captchas: CaptchaService;
  signup: SignupService;
  recovery: RecoveryService;
}

/**
 * POST /api/signup/verification: a partner session needs neither e-mail nor captcha; a user
 * session needs `email`, and `captcha` unless a `hardware-code` replaces it.
 */
function missingVerificationElement(
  body: Record<string, unknown>,
  request: FastifyRequest,
): string | undefined {
  if (request.session?.kind === 'partner') return undefined;
  if (!present(body, 'email')) return 'email';
  return present(body, 'hardware-code') || present(body, 'captcha') ? undefined : 'captcha';
}

export function signupRoutes(app: AppInstance, { captchas, signup, recovery }: SignupRouteServices): void {
  // The captcha is reset by every call that may answer one, success or not, even one that
  // fails validation: it is taken from the session before anything else looks at the request.
  const taken = new WeakMap<FastifyRequest, PendingCaptcha>();
  const takeCaptcha = async (request: FastifyRequest) => {
    if (request.session) taken.set(request, await captchas.take(request.session));
  };

  app.get(
    '/api/signup/captcha/:name.png',
    {
      config: { access: 'session', binary: true },
      schema: {
        summary: 'A new captcha image (PNG) for the session, or HTTP 404',
        description:
          "Every call replaces the session's captcha. The answer (letters in either case) goes " +
          'into the next POST /api/signup/verification or POST /api/password/recovery.',
        tags: ['signup'],
        params: CaptchaParams,
      },
    },
    async (request, reply) => {
      const png = await captchas.issue(sessionOf(request));
      return reply.type('image/png').header('cache-control', 'no-store').send(png);
    },
  );

  app.post(
    '/api/signup/verification',
    {
      config: { access: 'session', requires: missingVerificationElement },
      onRequest: takeCaptcha,
      schema: {
        summary: 'Request a sign-up verification key',
        description:
          'User sign-up: `captcha` and `email`; the key is mailed (answer `{}`). Partner session: ' +
          '`email` optional, answer `verification`, `uuid` (the UUID the user will get), `info`. ' +
          'With `hardware-code` instead of the captcha: answer `verification`. Keys are valid 7 ' +
          'days. Statuses wrong-captcha, email-failure, already-exist, wrong-code, exceeded-limit, ' +
          'resource-throttle (too many wrong captchas or codes). A partner holds at most 1000 unused ' +
          'keys (exceeded-limit, nothing stored).',
        tags: ['signup'],
        body: PostVerificationBody,
        response: { 200: PostVerificationAnswer },
      },
    },
    async (request) => signup.requestVerification(sessionOf(request), request.body, taken.get(request)),
  );

  app.get(
    '/api/signup/verification/:verification',
    {
      config: { access: 'session' },
      schema: {
        summary: 'What a verification key was issued for',
        description:
          'User sign-up: `email`; partner-controlled: `partner`, `uuid`; `info` as requested. ' +
          'Statuses unknown-verification, resource-throttle (too many unknown keys).',
        tags: ['signup'],
        params: VerificationParams,
        response: { 200: GetVerificationAnswer },
      },
    },
    async (request) => signup.describeVerification(sessionOf(request), request.params.verification),
  );

  app.delete(
    '/api/signup/verification/:verification',
    {
      config: { access: 'session' },
      schema: {
        summary: 'Delete a verification key',
        description: 'Statuses unknown-verification, resource-throttle.',
        tags: ['signup'],
        params: VerificationParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await signup.deleteVerification(sessionOf(request), request.params.verification);
      return {};
    },
  );

  app.post(
    '/api/signup/user',
    {
      config: { access: 'session' },
      schema: {
        summary: 'Create the user with a verification key',
        description:
          'Needs a session that is not authenticated (already-auth). The session becomes ' +
          'authenticated and the key is deleted. Statuses duplicate-username, unknown-verification, ' +
          'already-exist, resource-throttle.',
        tags: ['signup'],
        body: PostSignupUserBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await signup.signupUser(sessionOf(request), request.body);
      return {};
    },
  );

  app.post(
    '/api/password/recovery',
    {
      config: { access: 'session', requires: missingLogin },
      onRequest: takeCaptcha,
      schema: {
        summary: 'Mail a password recovery code',
        description:
          '`username` or `email`, and `captcha`. The code is valid for one hour and once. ' +
          'Statuses wrong-captcha, wrong-username, email-failure, resource-throttle.',
        tags: ['signup'],
        body: PostRecoveryBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await recovery.requestRecovery(sessionOf(request), request.body, taken.get(request));
      return {};
    },
  );

  app.post(
    '/api/password',
    {
      config: { access: 'session', requires: missingLogin },
      schema: {
        summary: 'Set a new password with a recovery code',
        description:
          'Needs a session that is not authenticated (already-auth). The code is used up and the ' +
          'session authenticated. Status wrong-username (also for a wrong, expired or used code), ' +
          'resource-throttle (too many wrong codes for the session or the account).',
        tags: ['signup'],
        body: PostPasswordBody,
        response: { 200: PostPasswordAnswer },
      },
    },
    async (request) => recovery.resetPassword(sessionOf(request), request.body),
  );
}
