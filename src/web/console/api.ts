/**
 * Every API call of the console, in one place, on the SDK (src/sdk, docs/decisions.md "The
 * SDK"): the paths, parameters and answers are the generated types of the published document, so
 * a route or field the server does not have is a type error here. The session id travels as a
 * Bearer header, never as a cookie (the page sends no credentials) and never in a URL except as
 * the did/dkey pair that spec "Authentication" 5 defines for downloads, which <audio> and <img>
 * need.
 */
import { createZentrale, ok, type Zentrale, ZentraleError } from '../../sdk/index.js';

export interface Session {
  sid: string;
  did: string;
}

/** A status other than ok, as the API answered it (spec "Errors"). */
export { ZentraleError as ApiStatus };

export class Api {
  private readonly zentrale: Zentrale;

  constructor(session?: Session) {
    // '': the page is served by the server it calls.
    this.zentrale = createZentrale({ baseUrl: '', ...(session ?? {}) });
  }

  get signedIn(): Session | undefined {
    const { sid, did } = this.zentrale;
    return sid !== undefined && did !== undefined ? { sid, did } : undefined;
  }

  /** POST /api/session without a session: a new authenticated session (spec "Session and sign-up"). */
  signIn(username: string, password: string): Promise<Session> {
    return this.zentrale.login(username, password);
  }

  /** Checks a remembered session: GET /api/session re-uses it when it is still authenticated. */
  async resume(): Promise<boolean> {
    if (this.zentrale.sid === undefined) return false;
    try {
      return ok(await this.zentrale.api.GET('/api/session')).auth === true;
    } catch {
      return false;
    }
  }

  async signOut(): Promise<void> {
    await this.zentrale.logout().catch(() => undefined);
  }

  /** The user; the document leaves tag_all optional (spec "User": a user's own view has it). */
  async user() {
    const { user } = ok(await this.zentrale.api.GET('/api/user'));
    if (user.tag_all === undefined) throw new ZentraleError('fail', 'the user has no tag_all');
    return { ...user, tag_all: user.tag_all };
  }

  async phones() {
    return ok(await this.zentrale.api.GET('/api/phone')).phone;
  }

  async sipAccounts() {
    return ok(await this.zentrale.api.GET('/api/sip')).sip;
  }

  async liveCalls() {
    return ok(await this.zentrale.api.GET('/api/call', { params: { query: { order: 'desc' } } })).call;
  }

  async hangUp(call: string): Promise<void> {
    ok(
      await this.zentrale.api.POST('/api/call/{uuid}/control', {
        params: { path: { uuid: call } },
        body: { command: 'hangup' },
      }),
    );
  }

  /** The newest objects of one type among the user's (tag_all, spec "User"). */
  async objects(tagAll: string, type: 'recording' | 'fax') {
    const answer = await this.zentrale.api.GET('/api/tag/{uuid}/object', {
      params: { path: { uuid: tagAll }, query: { type, order: 'desc', count: 50 } },
    });
    return ok(answer).object;
  }

  async fax(uuid: string) {
    return ok(await this.zentrale.api.GET('/api/fax/{uuid}', { params: { path: { uuid } } })).fax;
  }

  async dialplans() {
    return ok(await this.zentrale.api.GET('/api/dialplan/v2')).dialplan;
  }

  async dialplan(uuid: string): Promise<unknown> {
    return ok(await this.zentrale.api.GET('/api/dialplan/v2/{uuid}', { params: { path: { uuid } } }))
      .dialplan;
  }

  /** Creates a dialplan (no uuid) or replaces one; answers its uuid. */
  async saveDialplan(uuid: string | undefined, dialplan: unknown): Promise<string> {
    // The editor's JSON is checked by the server (wrong-dialplan), not by the page.
    type Body = { dialplan: never };
    const body = { dialplan } as Body;
    if (uuid === undefined) return ok(await this.zentrale.api.POST('/api/dialplan/v2', { body })).uuid;
    ok(await this.zentrale.api.POST('/api/dialplan/v2/{uuid}', { params: { path: { uuid } }, body }));
    return uuid;
  }

  recordingAudio(uuid: string): string {
    return this.zentrale.downloadUrl(`/api/recording/${uuid}/recording.ogg`, uuid, { inline: true });
  }

  faxPage(uuid: string, page: number): string {
    return this.zentrale.downloadUrl(`/api/fax/${uuid}/${page}/page.png`, uuid, { inline: true });
  }
}
