/**
 * Every API call of the console, in one place, so that it can move to the generated SDK
 * (sdk/, openapi-fetch) in one change. The session id travels as a Bearer header, never as a
 * cookie (the page sends no credentials) and never in a URL except as the did/dkey pair that
 * spec "Authentication" 5 defines for downloads, which <audio> and <img> need.
 */
import { base64url, md5 } from '../../sdk/md5.js';

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

/** A status other than ok, as the API answered it (spec "Errors"). */
export class ApiStatus extends Error {
  constructor(
    readonly status: string,
    readonly detail?: string,
  ) {
    super(detail ? `${status}: ${detail}` : status);
  }
}

type Answer = { status: string; message?: string } & Record<string, unknown>;

export class Api {
  private session: Session | undefined;

  constructor(session?: Session) {
    this.session = session;
  }

  get signedIn(): Session | undefined {
    return this.session;
  }

  private async call(method: string, path: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (this.session) headers.authorization = `Bearer ${this.session.sid}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(path, {
      method,
      credentials: 'omit',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json()) as Answer;
    if (answer.status !== 'ok') throw new ApiStatus(answer.status, answer.message);
    return answer;
  }

  /** POST /api/session without a session: a new authenticated session (spec "Session and sign-up"). */
  async signIn(username: string, password: string): Promise<Session> {
    const name = username.includes('@') ? { email: username } : { username };
    const answer = await this.call('POST', '/api/session', { ...name, password });
    this.session = { sid: answer.sid as string, did: answer.did as string };
    return this.session;
  }

  /** Checks a remembered session: GET /api/session re-uses it when it is still authenticated. */
  async resume(): Promise<boolean> {
    if (!this.session) return false;
    try {
      return (await this.call('GET', '/api/session')).auth === true;
    } catch {
      return false;
    }
  }

  async signOut(): Promise<void> {
    if (this.session) await this.call('DELETE', '/api/session').catch(() => undefined);
    this.session = undefined;
  }

  async user(): Promise<{ display_name: string; tag_all: string }> {
    return (await this.call('GET', '/api/user')).user as { display_name: string; tag_all: string };
  }

  async phones(): Promise<Record<string, PhoneSettings>> {
    return (await this.call('GET', '/api/phone')).phone as Record<string, PhoneSettings>;
  }

  async sipAccounts(): Promise<Record<string, SipAccount>> {
    return (await this.call('GET', '/api/sip')).sip as Record<string, SipAccount>;
  }

  async liveCalls(): Promise<LiveCall[]> {
    return (await this.call('GET', '/api/call?order=desc')).call as LiveCall[];
  }

  async hangUp(call: string): Promise<void> {
    await this.call('POST', `/api/call/${call}/control`, { command: 'hangup' });
  }

  /** The newest objects of one type among the user's (tag_all, spec "User"). */
  async objects(tagAll: string, type: 'recording' | 'fax'): Promise<ListedObject[]> {
    const answer = await this.call('GET', `/api/tag/${tagAll}/object?type=${type}&order=desc&count=50`);
    return answer.object as ListedObject[];
  }

  async fax(uuid: string): Promise<Fax> {
    return (await this.call('GET', `/api/fax/${uuid}`)).fax as Fax;
  }

  async dialplans(): Promise<DialplanEntry[]> {
    return (await this.call('GET', '/api/dialplan/v2')).dialplan as DialplanEntry[];
  }

  async dialplan(uuid: string): Promise<unknown> {
    return (await this.call('GET', `/api/dialplan/v2/${uuid}`)).dialplan;
  }

  /** Creates a dialplan (no uuid) or replaces one; answers its uuid. */
  async saveDialplan(uuid: string | undefined, dialplan: unknown): Promise<string> {
    if (uuid === undefined) return (await this.call('POST', '/api/dialplan/v2', { dialplan })).uuid as string;
    await this.call('POST', `/api/dialplan/v2/${uuid}`, { dialplan });
    return uuid;
  }

  /** A download URL with did/dkey (spec "Authentication" 5): `path` names `object` as its UUID. */
  downloadUrl(object: string, path: string): string {
    if (!this.session) throw new Error('not signed in');
    const dkey = base64url(md5(object.toLowerCase() + this.session.sid));
    return `${path}?inline&did=${encodeURIComponent(this.session.did)}&dkey=${dkey}`;
  }

  recordingAudio(uuid: string): string {
    return this.downloadUrl(uuid, `/api/recording/${uuid}/recording.ogg`);
  }

  faxPage(uuid: string, page: number): string {
    return this.downloadUrl(uuid, `/api/fax/${uuid}/${page}/page.png`);
  }
}
