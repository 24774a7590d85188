/**
 * Deployment contract (decisions.md, "Deployment contract"): the environment is read and
 * validated here once, into a frozen typed object. Nothing else reads process.env.
 */
import os from 'node:os';
import path from 'node:path';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** A postgres:// URL selects PostgreSQL; undefined means SQLite under dataDir. */
  readonly databaseUrl: string | undefined;
  readonly publicUrl: string;
  readonly smtpUrl: string | undefined;
  readonly captchaTestAnswer: string | undefined;
  /** New sessions per client address and minute; 0 = no limit. */
  readonly sessionRateLimit: number;
  /** Idle expiry of sessions, seconds. */
  readonly sessionIdleTimeout: number;
  readonly sipDomainLegacy: string;
  readonly sipDomainCurrent: string;
  /** Largest accepted upload in bytes (too-large beyond it). */
  readonly maxUploadSize: number;
  /** Largest accepted JSON request body in bytes. */
  readonly maxJsonBodySize: number;
  /** Conversion workers (fax, presentation, audio, text2speech) of this node. */
  readonly contentWorkers: number;
  /** Webhook URLs may name private, loopback and link-local addresses (decisions.md "Event transports"). */
  readonly webhookPrivateUrls: boolean;
  /** First webhook retry delay in ms; each further failure doubles it (up to an hour). */
  readonly webhookRetryMs: number;
  readonly logLevel: string;
  /** Seconds a stop waits for calls in flight before their connections are closed. */
  readonly shutdownTimeout: number;
  /** Seconds a client has to send a whole request (headers and body) before it is cut off. */
  readonly requestTimeout: number;
  /** Fastify's trustProxy: unset = the socket address is the client; else the proxies trusted. */
  readonly trustProxy: boolean | string[];
  /** decisions.md "The call engine": start Kamailio and rtpengine when found (auto), always (on), never (off). */
  readonly telephony: 'auto' | 'on' | 'off';
  /** Where SIP phones reach Kamailio (UDP and TCP). */
  readonly sipHost: string;
  readonly sipPort: number;
  /** rtpengine's media ports, inclusive. */
  readonly rtpPortMin: number;
  readonly rtpPortMax: number;
  /** sip: URI for numbers outside the platform; undefined: such calls are refused with 403. */
  readonly carrierUri: string | undefined;
  /** Seconds a call to a number answered by the call API waits for a client's decision (decisions.md "The call API"). */
  readonly callApiWait: number;
  /** Loopback ports of Zentrale's SIP user agent and the engines' control sockets; 0 = any free port. */
  readonly sipAppPort: number;
  readonly kamailioEventPort: number;
  readonly rtpengineControlPort: number;
  /** SECRET_KEY: 64 hex digits sealing stored secrets, the same on every node; undefined: DATA_DIR/secret.key. */
  readonly secretKey: string | undefined;
  /** Push services (README "Configuration"): origins of FCM, the OAuth2 token endpoint and the APNs hosts. */
  readonly pushFcmUrl: string;
  readonly pushOauthTokenUrl: string;
  readonly pushApnsUrl: string;
  readonly pushApnsSandboxUrl: string;
  /** PEM file of certificate authorities trusted for the push services besides the system's. */
  readonly pushCaFile: string | undefined;
  /** Seconds before a fax's first retry (busy, no answer, failed T.30); each next one doubles. */
  readonly faxRetrySeconds: number;
  /** FAX_LIBRARY: the spandsp library the fax engine loads (a path); unset: libspandsp.so.2. */
  readonly faxLibrary: string | undefined;
  /**
   * MEDIA_NICE: the nice value (−20..19) of the media worker thread, which mixes conferences and
   * sends every call's frames on a 20 ms clock (rtpengine's --priority for its media threads).
   */
  readonly mediaNice: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  // A minus sign only where the range has negatives (a nice value).
  if (!(min < 0 ? /^-?[0-9]+$/ : /^[0-9]+$/).test(raw))
    throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    // Not echoed: the URL may hold a password.
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function sipUri(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  // A SIP URI as Kamailio accepts it for $du: scheme, optional user, host, optional port and params.
  if (!/^sips?:([^@\s;]+@)?[A-Za-z0-9.\-[\]:]+(;[^\s]*)?$/.test(raw))
    throw new ConfigError(`${name} must be a sip: URI such as sip:carrier.example.net:5060, got "${raw}"`);
  return raw;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Reads and validates the configuration; throws ConfigError with a clear message. */
export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const publicUrl = url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://${host}:${port}`;
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const rtpPortMin = integer(env, 'RTP_PORT_MIN', 30000, 1024, 65535);
  const rtpPortMax = integer(env, 'RTP_PORT_MAX', 30999, 1024, 65535);
  // rtpengine needs pairs (RTP and RTCP): at least one pair.
  if (rtpPortMax < rtpPortMin + 1)
    throw new ConfigError(`RTP_PORT_MAX (${rtpPortMax}) must be above RTP_PORT_MIN (${rtpPortMin})`);
  return Object.freeze({
    port,
    host,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    publicUrl: publicUrl.replace(/\/+$/, ''),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    captchaTestAnswer: env.CAPTCHA_TEST_ANSWER || undefined,
    sessionRateLimit: integer(env, 'SESSION_RATE_LIMIT', 60, 0, 1_000_000_000),
    sessionIdleTimeout: integer(env, 'SESSION_IDLE_TIMEOUT', 86_400, 60, 31_536_000),
    sipDomainLegacy: env.SIP_DOMAIN_LEGACY || 'sip.legacy.zentrale.local',
    sipDomainCurrent: env.SIP_DOMAIN_CURRENT || 'sip.zentrale.local',
    maxUploadSize: integer(env, 'MAX_UPLOAD_SIZE', 20 * 1024 * 1024, 1024, 2 ** 31),
    maxJsonBodySize: integer(env, 'MAX_JSON_BODY_SIZE', 1024 * 1024, 1024, 2 ** 30),
    // One core stays free for the HTTP event loop.
    contentWorkers: integer(env, 'CONTENT_WORKERS', Math.max(1, os.availableParallelism() - 1), 1, 1024),
    webhookPrivateUrls: oneOf(env, 'WEBHOOK_PRIVATE_URLS', ['off', 'on'] as const, 'off') === 'on',
    webhookRetryMs: integer(env, 'WEBHOOK_RETRY_MS', 1000, 1, 3_600_000),
    logLevel,
    requestTimeout: integer(env, 'REQUEST_TIMEOUT', 60, 1, 3600),
    shutdownTimeout: integer(env, 'SHUTDOWN_TIMEOUT', 10, 0, 3600),
    trustProxy: trustProxy(env.TRUST_PROXY),
    telephony: oneOf(env, 'TELEPHONY', ['auto', 'on', 'off'] as const, 'auto'),
    sipHost: env.SIP_HOST || host,
    sipPort: integer(env, 'SIP_PORT', 5060, 1, 65535),
    rtpPortMin,
    rtpPortMax,
    carrierUri: sipUri(env, 'CARRIER_URI'),
    callApiWait: integer(env, 'CALL_API_WAIT', 30, 1, 600),
    sipAppPort: integer(env, 'SIP_APP_PORT', 0, 0, 65535),
    kamailioEventPort: integer(env, 'KAMAILIO_EVENT_PORT', 0, 0, 65535),
    rtpengineControlPort: integer(env, 'RTPENGINE_CONTROL_PORT', 0, 0, 65535),
    secretKey: secretKey(env.SECRET_KEY),
    pushFcmUrl: origin(env, 'PUSH_FCM_URL', 'https://fcm.googleapis.com'),
    pushOauthTokenUrl:
      url(env, 'PUSH_OAUTH_TOKEN_URL', ['https:', 'http:']) ?? 'https://oauth2.googleapis.com/token',
    pushApnsUrl: origin(env, 'PUSH_APNS_URL', 'https://api.push.apple.com'),
    pushApnsSandboxUrl: origin(env, 'PUSH_APNS_SANDBOX_URL', 'https://api.sandbox.push.apple.com'),
    pushCaFile: env.PUSH_CA_FILE ? path.resolve(env.PUSH_CA_FILE) : undefined,
    faxRetrySeconds: integer(env, 'FAX_RETRY_SECONDS', 120, 0, 86_400),
    faxLibrary: env.FAX_LIBRARY || undefined,
    mediaNice: integer(env, 'MEDIA_NICE', -10, -20, 19),
  });
}

/** An https:// (or, for local stand-ins, h2c http://) origin without a path. */
function origin(env: Env, name: string, fallback: string): string {
  const raw = url(env, name, ['https:', 'http:']);
  if (raw === undefined) return fallback;
  const parsed = new URL(raw);
  if (parsed.pathname !== '/' || parsed.search !== '' || parsed.username !== '')
    throw new ConfigError(`${name} must be an origin such as https://host:port, without a path`);
  return parsed.origin;
}

/** SECRET_KEY: 32 bytes as 64 hex digits (never echoed: it is a secret). */
function secretKey(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-9a-fA-F]{64}$/.test(raw))
    throw new ConfigError('SECRET_KEY must be 64 hex digits (32 bytes), e.g. from `openssl rand -hex 32`');
  return raw.toLowerCase();
}

/** TRUST_PROXY: `true` (every proxy) or a comma list of the proxies' addresses/CIDRs. */
function trustProxy(raw: string | undefined): boolean | string[] {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  const list = raw.split(',').map((entry) => entry.trim());
  if (list.some((entry) => !/^[0-9a-fA-F.:/]+$/.test(entry))) {
    throw new ConfigError(`TRUST_PROXY must be true or a list of addresses, got "${raw}"`);
  }
  return list;
}
