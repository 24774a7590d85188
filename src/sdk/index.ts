/**
 * Zentrale's TypeScript SDK (issue 29; docs/decisions.md "The SDK"): the API's types generated
 * from the OpenAPI document the server publishes (schema.d.ts, by generate.ts at build time) and
 * openapi-fetch calling it, with the few things a client needs beside: login and the session id
 * (sent as a Bearer header), did/dkey download URLs (spec "Authentication" 5), the event
 * channel (GET /api/event) as an async iterator that resumes from the next event, and
 * ZentraleError for a status other than ok. Runs in Node.js 18+ and in browsers (fetch).
 *
 * Every answer is HTTP 200 (spec "Conventions"); its body is a union of the success body and the
 * error envelope whose `status` is the enum of that operation's statuses, so checking
 * `data.status === 'ok'` narrows to the success body and a status the operation cannot answer is
 * a type error.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import { base64url, md5 } from './md5.js';
import type { paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** A status other than ok (spec "Errors"), as the API answered it. */
export class ZentraleError extends Error {
  constructor(
    readonly status: string,
    readonly detail?: string,
  ) {
    super(detail ? `${status}: ${detail}` : status);
    this.name = 'ZentraleError';
  }
}

/** An event of the session's channel (spec "Events"): `id`, `event` (its name), its fields. */
export interface ZentraleEvent {
  id: number;
  event: string;
  time?: number;
  [field: string]: unknown;
}

export interface ZentraleOptions {
  /** The server, e.g. `https://zentrale.example.com`; '' in a page the server serves. */
  baseUrl: string;
  /** A session id to go on with (a remembered login). */
  sid?: string;
  /** That session's download id (did), for downloadUrl without a new login. */
  did?: string;
  /** The fetch to use (default: the global one). */
  fetch?: ClientOptions['fetch'];
}

export interface Zentrale {
  /** The typed client: `api.GET('/api/contact/{uuid}', { params: { path: { uuid } } })`. */
  readonly api: Client<paths>;
  /** The session id in use (undefined before login). */
  readonly sid: string | undefined;
  /** The session's download id (did), after login. */
  readonly did: string | undefined;
  /** POST /api/session with a username (or e-mail) and password; the sid is used from then on. */
  login(username: string, password: string): Promise<{ sid: string; did: string }>;
  /** DELETE /api/session; the SDK forgets the sid (also when the call fails). */
  logout(): Promise<void>;
  /** A download URL of `path` for `object` with did and dkey instead of the session (e.g. for `<img>`). */
  downloadUrl(path: string, object: string, options?: { inline?: boolean }): string;
  /**
   * The session's events, one at a time, for as long as the caller iterates (or until `signal`
   * aborts): the first GET /api/event asks from `next` (default 0: every event the session still
   * holds), each waits up to `timeout` seconds and the next asks from the id after the last one
   * received, so a reconnect loses nothing the server still holds.
   */
  events(options?: { next?: number; timeout?: number; signal?: AbortSignal }): AsyncIterable<ZentraleEvent>;
}

/** The body of an answer whose status is ok, or ZentraleError. */
export function ok<T extends { status: string; message?: string }>(answer: {
  data?: T;
  error?: unknown;
  response: Response;
}): Extract<T, { status: 'ok' }> {
  const data = answer.data;
  if (!data) throw new ZentraleError('fail', `HTTP ${answer.response.status}`);
  if (data.status !== 'ok') throw new ZentraleError(data.status, data.message);
  return data as Extract<T, { status: 'ok' }>;
}

export function createZentrale(options: ZentraleOptions): Zentrale {
  let sid = options.sid;
  let did = options.did;
  const api = createClient<paths>({
    baseUrl: options.baseUrl,
    // The session travels as a Bearer header, never as a cookie.
    credentials: 'omit',
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  api.use({
    onRequest({ request }) {
      if (sid !== undefined && !request.headers.has('authorization'))
        request.headers.set('authorization', `Bearer ${sid}`);
      return request;
    },
  });

  return {
    api,
    get sid() {
      return sid;
    },
    get did() {
      return did;
    },
    async login(username, password) {
      const name = username.includes('@') ? { email: username } : { username };
      // A new session: none is sent with the login.
      sid = undefined;
      const answer = ok(await api.POST('/api/session', { body: { ...name, password } }));
      if (answer.sid === undefined || answer.did === undefined)
        throw new ZentraleError('fail', 'the answer named no session');
      sid = answer.sid;
      did = answer.did;
      return { sid: answer.sid, did: answer.did };
    },
    async logout() {
      // The sid is forgotten even when the server cannot be reached.
      try {
        if (sid !== undefined) await api.DELETE('/api/session');
      } finally {
        sid = undefined;
        did = undefined;
      }
    },
    downloadUrl(path, object, { inline = false } = {}) {
      if (sid === undefined || did === undefined) throw new ZentraleError('no-session', 'log in first');
      const dkey = base64url(md5(object.toLowerCase() + sid));
      const query = `${inline ? 'inline&' : ''}did=${encodeURIComponent(did)}&dkey=${dkey}`;
      return `${options.baseUrl}${path}${path.includes('?') ? '&' : '?'}${query}`;
    },
    events({ next = 0, timeout = 60, signal } = {}) {
      return {
        async *[Symbol.asyncIterator]() {
          let from = next;
          while (!signal?.aborted) {
            const answer = await api.GET('/api/event', {
              params: { query: { next: from, timeout } },
              ...(signal ? { signal } : {}),
            });
            const events: ZentraleEvent[] = ok(answer).event;
            for (const event of events) {
              from = Math.max(from, event.id + 1);
              yield event;
            }
          }
        },
      };
    },
  };
}
