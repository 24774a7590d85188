/**
 * Sending to the iOS service (APNs, Apple's "Sending notification requests to APNs"): HTTP/2
 * POST /3/device/<token> to the production or sandbox host the registration names, with a
 * provider token (JWT, ES256, `kid` = key id, `iss` = team id, `iat`) made from the operator's
 * .p8 key of the registration's application id. Apple refuses tokens older than an hour and
 * asks not to renew them more often than every 20 minutes: one token per application id is
 * used for 30 minutes. Notifications are background pushes (`aps.content-available`), so
 * apns-push-type background with apns-priority 5, as Apple requires for those.
 */

import { createPrivateKey } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import { DELIVERY_LIFETIME_S, type SendOutcome } from './push.delivery.js';
import type { Http2Pool } from './push.http2.js';
import { signJwt } from './push.jwt.js';
import type { PushRegistrationTable } from './push.repository.js';
import { defaultTopic } from './push.service.js';
import type { PushCredentials } from './push-application.service.js';

/** How long one provider token is used (Apple: at most an hour, renewed at most every 20 minutes). */
export const PROVIDER_TOKEN_LIFETIME_MS = 30 * 60 * 1000;
/** How long operator credentials are kept in memory before they are read again (a CLI change applies within it). */
const CREDENTIALS_TTL_MS = 60 * 1000;

export interface ApnsSenderDeps {
  readonly pool: Http2Pool;
  readonly productionUrl: string;
  readonly sandboxUrl: string;
  readonly credentials: (applicationId: string) => Promise<PushCredentials | undefined>;
  readonly clock: Clock;
}

interface ProviderToken {
  readonly jwt: string;
  readonly issued: number;
}

/** APNs' reasons (the `reason` of the JSON answer) that say the device token is no good. */
const DEAD_TOKEN = new Set(['BadDeviceToken', 'Unregistered', 'DeviceTokenNotForTopic', 'ExpiredToken']);
const STALE_PROVIDER_TOKEN = new Set(['ExpiredProviderToken', 'InvalidProviderToken']);

export function retryAfterMs(value: string | string[] | undefined, now: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  if (/^[0-9]+$/.test(raw)) return Number(raw) * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export class ApnsSender {
  private readonly tokens = new Map<string, ProviderToken>();
  private readonly credentials = new Map<string, { value: PushCredentials | undefined; read: number }>();

  constructor(private readonly deps: ApnsSenderDeps) {}

  private async credentialsOf(applicationId: string): Promise<PushCredentials | undefined> {
    const now = this.deps.clock.now();
    const cached = this.credentials.get(applicationId);
    if (cached && now - cached.read < CREDENTIALS_TTL_MS) return cached.value;
    const value = await this.deps.credentials(applicationId);
    this.credentials.set(applicationId, { value, read: now });
    return value;
  }

  /** The application id's provider token, renewed after PROVIDER_TOKEN_LIFETIME_MS. */
  private async providerToken(credentials: PushCredentials): Promise<string> {
    const now = this.deps.clock.now();
    const cached = this.tokens.get(credentials.application_id);
    if (cached && now - cached.issued < PROVIDER_TOKEN_LIFETIME_MS) return cached.jwt;
    const jwt = await signJwt(
      'ES256',
      { kid: credentials.key_id },
      { iss: credentials.team_id, iat: Math.floor(now / 1000) },
      createPrivateKey(credentials.private_key),
    );
    this.tokens.set(credentials.application_id, { jwt, issued: now });
    return jwt;
  }

  async send(registration: PushRegistrationTable, payload: string, created: number): Promise<SendOutcome> {
    const applicationId = registration.application_id ?? '';
    const credentials = await this.credentialsOf(applicationId);
    if (!credentials)
      return { kind: 'drop', reason: `application id ${applicationId} is no longer registered` };
    const origin = registration.sandbox === 1 ? this.deps.sandboxUrl : this.deps.productionUrl;
    for (let attempt = 0; ; attempt++) {
      const answer = await this.deps.pool.request(origin, applicationId, {
        method: 'POST',
        path: `/3/device/${registration.device_token}`,
        headers: {
          authorization: `bearer ${await this.providerToken(credentials)}`,
          'apns-topic': registration.apns_topic ?? defaultTopic(applicationId),
          'apns-push-type': 'background',
          'apns-priority': '5',
          'apns-expiration': String(Math.floor(created / 1000) + DELIVERY_LIFETIME_S),
          'content-type': 'application/json',
        },
        body: payload,
      });
      if (answer.status === 200) return { kind: 'sent' };
      const reason = apnsReason(answer.body);
      if (answer.status === 410 || (answer.status === 400 && DEAD_TOKEN.has(reason)))
        return { kind: 'gone', reason: `${answer.status} ${reason}` };
      if (answer.status === 403 && STALE_PROVIDER_TOKEN.has(reason)) {
        // Renew the token (and re-read a key the operator may have replaced) once, at once.
        this.tokens.delete(applicationId);
        this.credentials.delete(applicationId);
        if (attempt === 0) continue;
        return { kind: 'retry', reason: `403 ${reason}` };
      }
      if (answer.status === 429 || answer.status >= 500)
        return {
          kind: 'retry',
          afterMs: retryAfterMs(answer.headers['retry-after'], this.deps.clock.now()),
          reason: `${answer.status} ${reason}`,
        };
      return { kind: 'drop', reason: `${answer.status} ${reason}` };
    }
  }
}

function apnsReason(body: string): string {
  try {
    const reason = (JSON.parse(body) as { reason?: unknown }).reason;
    return typeof reason === 'string' ? reason : '';
  } catch {
    return '';
  }
}
