/**
 * Local stand-ins for the push services (tests and bench/push.ts): HTTP/2 over TLS with a
 * self-signed certificate made here, one server per service, each checking what Zentrale sends
 * the way the service does and answering with the services' documented errors on request.
 *
 * - OAuth2 token endpoint (POST /token): JWT bearer grant; the RS256 assertion's signature is
 *   verified with the service account's public key, and iss, scope, aud, iat/exp checked.
 * - FCM HTTP v1 (POST /v1/projects/<project>/messages:send): needs a Bearer token it issued.
 * - APNs (POST /3/device/<token>, production and sandbox): the ES256 provider token verified with
 *   the public key of its kid; iss = the team, iat within the hour; apns-topic present.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, type KeyObject, randomUUID, verify } from 'node:crypto';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';

export interface RecordedRequest {
  readonly service: 'oauth' | 'fcm' | 'apns' | 'apns-sandbox';
  readonly path: string;
  readonly headers: http2.IncomingHttpHeaders;
  readonly body: string;
  /** Which connection of the service carried it (1, 2, ...). */
  readonly connection: number;
  /** The JWT's decoded header and claims (oauth: the assertion; apns: the provider token). */
  readonly jwt?: { header: Record<string, unknown>; claims: Record<string, unknown> };
}

export interface ScriptedAnswer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** The services' documented errors. */
export const ANSWERS = {
  apnsUnregistered: { status: 410, body: { reason: 'Unregistered', timestamp: 1700000000000 } },
  apnsBadDeviceToken: { status: 400, body: { reason: 'BadDeviceToken' } },
  apnsTooMany: { status: 429, body: { reason: 'TooManyRequests' }, headers: { 'retry-after': '0' } },
  apnsUnavailable: { status: 503, body: { reason: 'ServiceUnavailable' } },
  apnsExpiredProviderToken: { status: 403, body: { reason: 'ExpiredProviderToken' } },
  fcmUnregistered: {
    status: 404,
    body: {
      error: {
        code: 404,
        message: 'Requested entity was not found.',
        status: 'NOT_FOUND',
        details: [
          { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' },
        ],
      },
    },
  },
  fcmInvalidToken: {
    status: 400,
    body: {
      error: {
        code: 400,
        message: 'The registration token is not a valid FCM registration token',
        status: 'INVALID_ARGUMENT',
        details: [
          { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' },
          {
            '@type': 'type.googleapis.com/google.rpc.BadRequest',
            fieldViolations: [{ field: 'message.token', description: 'Invalid registration token' }],
          },
        ],
      },
    },
  },
  fcmQuota: {
    status: 429,
    body: { error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ errorCode: 'QUOTA_EXCEEDED' }] } },
    headers: { 'retry-after': '0' },
  },
  fcmUnavailable: {
    status: 503,
    body: { error: { code: 503, status: 'UNAVAILABLE', details: [{ errorCode: 'UNAVAILABLE' }] } },
  },
} satisfies Record<string, ScriptedAnswer>;

/** A self-signed certificate for 127.0.0.1 and localhost (openssl), in a temporary directory. */
export function selfSignedCertificate(): { key: string; cert: string; certFile: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-push-ca-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8'), certFile, dir };
}

function decodeJwt(jwt: string, key: KeyObject | undefined, algorithm: 'RS256' | 'ES256') {
  const parts = jwt.split('.');
  if (parts.length !== 3) return undefined;
  const [header64, claims64, signature64] = parts as [string, string, string];
  try {
    const header = JSON.parse(Buffer.from(header64, 'base64url').toString('utf8')) as Record<string, unknown>;
    const claims = JSON.parse(Buffer.from(claims64, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (header.alg !== algorithm || !key) return undefined;
    const ok = verify(
      'sha256',
      Buffer.from(`${header64}.${claims64}`),
      algorithm === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key,
      Buffer.from(signature64, 'base64url'),
    );
    return ok ? { header, claims } : undefined;
  } catch {
    return undefined;
  }
}

export interface PushStandInOptions {
  /** The FCM service account: its project, e-mail and public key. */
  readonly fcm: { projectId: string; clientEmail: string; publicKey: KeyObject };
  /** APNs: key id -> team id and public key. */
  readonly apnsKeys: ReadonlyMap<string, { teamId: string; publicKey: KeyObject }>;
  /** false: keep only failed requests in `requests` (benchmark); every request is still emitted. */
  readonly record?: boolean;
}

export class PushStandIns extends EventEmitter {
  readonly requests: RecordedRequest[] = [];
  /** Answers per device token, used in order; then 200. */
  readonly script = new Map<string, ScriptedAnswer[]>();
  readonly connections = { oauth: 0, fcm: 0, apns: 0, 'apns-sandbox': 0 };
  /** Requests answered 200, per service. */
  readonly delivered = { fcm: 0, apns: 0, 'apns-sandbox': 0 };
  readonly urls = { oauth: '', fcm: '', apns: '', apnsSandbox: '' };
  private readonly servers: http2.Http2SecureServer[] = [];
  private readonly issued = new Set<string>();
  private readonly verified = new Map<
    string,
    { header: Record<string, unknown>; claims: Record<string, unknown> }
  >();
  private certificate = selfSignedCertificate();
  private counter = 0;

  constructor(private readonly options: PushStandInOptions) {
    super();
  }

  /** Forgets the access tokens issued so far (FCM then answers 401 UNAUTHENTICATED to them). */
  revokeAccessTokens(): void {
    this.issued.clear();
  }

  /** The environment that points a node at these stand-ins. */
  get env(): Record<string, string> {
    return {
      PUSH_FCM_URL: this.urls.fcm,
      PUSH_OAUTH_TOKEN_URL: this.urls.oauth,
      PUSH_APNS_URL: this.urls.apns,
      PUSH_APNS_SANDBOX_URL: this.urls.apnsSandbox,
      PUSH_CA_FILE: this.certificate.certFile,
    };
  }

  async start(): Promise<this> {
    this.urls.oauth = `${await this.listen('oauth')}/token`;
    this.urls.fcm = await this.listen('fcm');
    this.urls.apns = await this.listen('apns');
    this.urls.apnsSandbox = await this.listen('apns-sandbox');
    return this;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            // Ends the clients' connections too.
            for (const session of (server as unknown as { sessions?: Set<http2.ServerHttp2Session> })
              .sessions ?? [])
              session.destroy();
          }),
      ),
    );
    fs.rmSync(this.certificate.dir, { recursive: true, force: true });
  }

  /** Resolves once `count` requests of `service` have been answered. */
  async waitFor(service: RecordedRequest['service'], count: number): Promise<RecordedRequest[]> {
    const of = () => this.requests.filter((request) => request.service === service);
    while (of().length < count) await new Promise((resolve) => this.once('request', resolve));
    return of();
  }

  private listen(service: RecordedRequest['service']): Promise<string> {
    const server = http2.createSecureServer({ key: this.certificate.key, cert: this.certificate.cert });
    const sessions = new Set<http2.ServerHttp2Session>();
    (server as unknown as { sessions: Set<http2.ServerHttp2Session> }).sessions = sessions;
    const numbers = new WeakMap<http2.ServerHttp2Session, number>();
    server.on('session', (session) => {
      sessions.add(session);
      session.on('close', () => sessions.delete(session));
      numbers.set(session, ++this.connections[service]);
    });
    server.on('stream', (stream, headers) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const connection = numbers.get(stream.session as http2.ServerHttp2Session) ?? 0;
        const { answer, jwt } = this.answer(service, headers, body);
        const recorded: RecordedRequest = {
          service,
          path: String(headers[':path']),
          headers,
          body,
          connection,
          ...(jwt ? { jwt } : {}),
        };
        if (this.options.record !== false || answer.status !== 200) this.requests.push(recorded);
        if (answer.status === 200 && service !== 'oauth') this.delivered[service] += 1;
        if (!stream.destroyed) {
          stream.respond({ ':status': answer.status, 'content-type': 'application/json', ...answer.headers });
          stream.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
        }
        this.emit('request', recorded);
      });
    });
    this.servers.push(server);
    return new Promise((resolve) =>
      server.listen(0, '127.0.0.1', () => {
        const address = server.address() as { port: number };
        resolve(`https://127.0.0.1:${address.port}`);
      }),
    );
  }

  private scripted(token: string): ScriptedAnswer | undefined {
    const list = this.script.get(token);
    const next = list?.shift();
    if (list && list.length === 0) this.script.delete(token);
    return next;
  }

  private jwtOf(token: string, key: KeyObject | undefined, algorithm: 'RS256' | 'ES256') {
    const cached = this.verified.get(token);
    if (cached) return cached;
    const decoded = decodeJwt(token, key, algorithm);
    if (decoded) this.verified.set(token, decoded);
    return decoded;
  }

  private answer(
    service: RecordedRequest['service'],
    headers: http2.IncomingHttpHeaders,
    body: string,
  ): { answer: ScriptedAnswer; jwt?: RecordedRequest['jwt'] } {
    const now = Math.floor(Date.now() / 1000);
    const requestPath = String(headers[':path']);
    if (headers[':method'] !== 'POST') return { answer: { status: 405 } };
    if (service === 'oauth') {
      const form = new URLSearchParams(body);
      const assertion = form.get('assertion') ?? '';
      const jwt = decodeJwt(assertion, this.options.fcm.publicKey, 'RS256');
      const claims = jwt?.claims ?? {};
      const good =
        requestPath === '/token' &&
        headers['content-type'] === 'application/x-www-form-urlencoded' &&
        form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer' &&
        jwt !== undefined &&
        claims.iss === this.options.fcm.clientEmail &&
        claims.scope === 'https://www.googleapis.com/auth/firebase.messaging' &&
        claims.aud === this.urls.oauth &&
        typeof claims.iat === 'number' &&
        claims.exp === claims.iat + 3600 &&
        Math.abs(claims.iat - now) < 300;
      if (!good)
        return { answer: { status: 400, body: { error: 'invalid_grant' } }, ...(jwt ? { jwt } : {}) };
      const token = `ya29.stand-in-${++this.counter}`;
      this.issued.add(token);
      return {
        answer: { status: 200, body: { access_token: token, expires_in: 3599, token_type: 'Bearer' } },
        jwt,
      };
    }
    if (service === 'fcm') {
      const match = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(requestPath);
      if (!match || match[1] !== this.options.fcm.projectId)
        return { answer: { status: 404, body: { error: { code: 404, status: 'NOT_FOUND' } } } };
      const bearer = /^Bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1];
      if (!bearer || !this.issued.has(bearer))
        return { answer: { status: 401, body: { error: { code: 401, status: 'UNAUTHENTICATED' } } } };
      let token = '';
      try {
        const parsed = JSON.parse(body) as { message?: { token?: unknown; data?: Record<string, unknown> } };
        token = String(parsed.message?.token ?? '');
        if (Object.values(parsed.message?.data ?? {}).some((value) => typeof value !== 'string'))
          return {
            answer: {
              status: 400,
              body: {
                error: { code: 400, status: 'INVALID_ARGUMENT', message: 'data values must be strings' },
              },
            },
          };
      } catch {
        return { answer: { status: 400, body: { error: { code: 400, status: 'INVALID_ARGUMENT' } } } };
      }
      return {
        answer: this.scripted(token) ?? {
          status: 200,
          body: { name: `projects/${this.options.fcm.projectId}/messages/${++this.counter}` },
        },
      };
    }
    const match = /^\/3\/device\/([0-9a-f]+)$/.exec(requestPath);
    if (!match) return { answer: { status: 404, body: { reason: 'BadPath' } } };
    const bearer = /^bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1] ?? '';
    let kid: unknown;
    try {
      kid = JSON.parse(Buffer.from(bearer.split('.')[0] ?? '', 'base64url').toString('utf8')).kid;
    } catch {}
    const key = this.options.apnsKeys.get(String(kid));
    const jwt = this.jwtOf(bearer, key?.publicKey, 'ES256');
    if (!jwt || jwt.claims.iss !== key?.teamId || typeof jwt.claims.iat !== 'number')
      return { answer: { status: 403, body: { reason: 'InvalidProviderToken' } }, ...(jwt ? { jwt } : {}) };
    if (now - jwt.claims.iat > 3600)
      return { answer: { status: 403, body: { reason: 'ExpiredProviderToken' } }, jwt };
    if (!headers['apns-topic']) return { answer: { status: 400, body: { reason: 'MissingTopic' } }, jwt };
    try {
      JSON.parse(body);
    } catch {
      return { answer: { status: 400, body: { reason: 'PayloadEmpty' } }, jwt };
    }
    return {
      answer: this.scripted(match[1] as string) ?? { status: 200, headers: { 'apns-id': randomUUID() } },
      jwt,
    };
  }
}

/** Local FCM stand-ins and the service account a node signs with (pushFcmCredentials.setCredential). */
export async function fcmStandIn(t: TestContext) {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const email = 'push@zentrale-test.iam.gserviceaccount.com';
  const services = await new PushStandIns({
    fcm: { projectId: 'zentrale-test', clientEmail: email, publicKey: rsa.publicKey },
    apnsKeys: new Map(),
  }).start();
  t.after(() => services.close());
  const serviceAccount = JSON.stringify({
    type: 'service_account',
    project_id: 'zentrale-test',
    private_key_id: 'abc123def456',
    private_key: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: email,
    token_uri: 'https://oauth2.googleapis.com/token',
  });
  return { services, serviceAccount };
}
