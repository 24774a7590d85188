/**
 * Every API call of the console, in one place, on the SDK (src/sdk: the types generated from the
 * published document, openapi-fetch). The session id travels as a Bearer header, never as a
 * cookie (the page sends no credentials) and never in a URL except as the did/dkey pair that
 * spec "Authentication" 5 defines for downloads, which <audio> and <img> need.
 */
import { createZentrale, ok, type Zentrale } from '../../sdk/index.js';

export interface Session {
  sid: string;
  did: string;
}

export interface SipAccount {
  domain: string;
  description: string;
  contact?: string;
  expire?: number;
}

export interface PhoneSettings {
  answer: string;
  dialplan?: string;
  locked: boolean;
}

export interface LiveCall {
  uuid: string;
  direction: 'in' | 'out';
  from: string;
  to: string;
  state: string;
}

export interface ListedObject {
  uuid: string;
  description: string;
  time: number;
  status?: string;
}

export interface Fax {
  description: string;
  status: string;
  page_count?: number;
}

export interface DialplanEntry {
  uuid: string;
  description: string;
}

/** A status other than ok (spec "Errors"): the SDK's error. */
export { ZentraleError as ApiStatus } from '../../sdk/index.js';

export class Api {
  private session: Session | undefined;
  private readonly zentrale: Zentrale;

  constructor(session?: Session) {
    this.session = session;
    // Same origin: the page is served by the node it calls.
    this.zentrale = createZentrale({ baseUrl: '', ...(session ?? {}) });
  }

  get signedIn(): Session | undefined {
    return this.session;
  }

  private get api() {
    return this.zentrale.api;
  }

  /** POST /api/session without a session: a new authenticated session (spec "Session and sign-up"). */
  async signIn(username: string, password: string): Promise<Session> {
    this.session = await this.zentrale.login(username, password);
    return this.session;
  }

  /** Checks a remembered session: GET /api/session re-uses it when it is still authenticated. */
  async resume(): Promise<boolean> {
    if (!this.session) return false;
    try {
      return ok(await this.api.GET('/api/session')).auth === true;
    } catch {
      return false;
    }
  }

  async signOut(): Promise<void> {
    if (this.session) await this.zentrale.logout().catch(() => undefined);
    this.session = undefined;
  }

  async user(): Promise<{ display_name: string; tag_all: string }> {
    return ok(await this.api.GET('/api/user')).user as { display_name: string; tag_all: string };
  }

  async phones(): Promise<Record<string, PhoneSettings>> {
    return ok(await this.api.GET('/api/phone')).phone as Record<string, PhoneSettings>;
  }

  async sipAccounts(): Promise<Record<string, SipAccount>> {
    return ok(await this.api.GET('/api/sip')).sip as Record<string, SipAccount>;
  }

  async liveCalls(): Promise<LiveCall[]> {
    return ok(await this.api.GET('/api/call', { params: { query: { order: 'desc' } } })).call as LiveCall[];
  }

  async hangUp(call: string): Promise<void> {
    ok(
      await this.api.POST('/api/call/{uuid}/control', {
        params: { path: { uuid: call } },
        body: { command: 'hangup' },
      }),
    );
  }

  /** The newest objects of one type among the user's (tag_all, spec "User"). */
  async objects(tagAll: string, type: 'recording' | 'fax'): Promise<ListedObject[]> {
    const answer = ok(
      await this.api.GET('/api/tag/{uuid}/object', {
        params: { path: { uuid: tagAll }, query: { type, order: 'desc', count: 50 } },
      }),
    );
    return answer.object as ListedObject[];
  }

  async fax(uuid: string): Promise<Fax> {
    return ok(await this.api.GET('/api/fax/{uuid}', { params: { path: { uuid } } })).fax as Fax;
  }

  async dialplans(): Promise<DialplanEntry[]> {
    return ok(await this.api.GET('/api/dialplan/v2')).dialplan as DialplanEntry[];
  }

  async dialplan(uuid: string): Promise<unknown> {
    return ok(await this.api.GET('/api/dialplan/v2/{uuid}', { params: { path: { uuid } } })).dialplan;
  }

  /** Creates a dialplan (no uuid) or replaces one; answers its uuid. */
  async saveDialplan(uuid: string | undefined, dialplan: unknown): Promise<string> {
    const body = { dialplan } as never;
    if (uuid === undefined) return ok(await this.api.POST('/api/dialplan/v2', { body })).uuid;
    ok(await this.api.POST('/api/dialplan/v2/{uuid}', { params: { path: { uuid } }, body }));
    return uuid;
  }

  /** A download URL with did/dkey (spec "Authentication" 5): `path` names `object` as its UUID. */
  downloadUrl(object: string, path: string): string {
    return this.zentrale.downloadUrl(path, object, { inline: true });
  }

  recordingAudio(uuid: string): string {
    return this.downloadUrl(uuid, `/api/recording/${uuid}/recording.ogg`);
  }

  faxPage(uuid: string, page: number): string {
    return this.downloadUrl(uuid, `/api/fax/${uuid}/${page}/page.png`);
  }
}
