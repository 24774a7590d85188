/**
 * Bodies with alternatives (decisions.md, "Reading the specification"): the generic order puts
 * missing-element before wrong-syntax, and for a body of several alternative forms (user or
 * partner login, user name or e-mail) only the route knows which form was meant. A route
 * declares `requires`, which names the first missing element of the form the body chose; it
 * runs before the schema checks the formats of what is present.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

/** Names the first mandatory element missing from the body's chosen form, or undefined. */
export type RequiresCheck = (body: Record<string, unknown>, request: FastifyRequest) => string | undefined;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Missing elements of a body with alternative forms, judged before its formats. */
    requires?: RequiresCheck;
  }
}

/** Present: sent with any value, even a malformed one (that is wrong-syntax, later). */
export function present(body: Record<string, unknown>, field: string): boolean {
  return body[field] !== undefined;
}

/** A login by `username` or `email`: missing username when neither is sent. */
export function missingLogin(body: Record<string, unknown>): string | undefined {
  return present(body, 'username') || present(body, 'email') ? undefined : 'username';
}

export function registerAlternatives(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const requires = route.config?.requires;
    if (!requires) return;
    const check = async (request: FastifyRequest) => {
      const body = request.body;
      const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {};
      const missing = requires(fields as Record<string, unknown>, request);
      if (missing !== undefined) throw new ApiError('missing-element', `missing ${missing}`);
    };
    route.preValidation = [...[route.preValidation ?? []].flat(), check];
  });
}
