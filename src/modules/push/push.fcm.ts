/**
 * Sending to the Android service (FCM HTTP v1): POST /v1/projects/<project>/messages:send with
 * an OAuth2 access token of the service account. The token comes from the OAuth2 token endpoint
 * (RFC 7523 JWT bearer grant: an RS256 assertion with iss = client_email, the
 * firebase.messaging scope, aud = the token endpoint, an hour's lifetime) and is kept until a
 * minute before it expires. Messages are data messages (values are strings), with high Android
 * priority so that the app hears of a call or voicemail at once.
 */

import { createPrivateKey } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import { retryAfterMs } from './push.apns.js';
import { DELIVERY_LIFETIME_S, type SendOutcome } from './push.delivery.js';
import type { Http2Pool } from './push.http2.js';
import { signJwt } from './push.jwt.js';
import type { PushRegistrationTable } from './push.repository.js';
import type { FcmCredentials } from './push-fcm.service.js';

export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const CREDENTIALS_TTL_MS = 60 * 1000;
/** An access token is renewed this long before it expires. */
const EXPIRY_MARGIN_MS = 60 * 1000;

export interface FcmSenderDeps {
  readonly pool: Http2Pool;
  readonly fcmUrl: string;
  readonly tokenUrl: string;
  readonly credentials: () => Promise<FcmCredentials | undefined>;
  readonly clock: Clock;
}

interface AccessToken {
  readonly key: string;
  readonly token: string;
  readonly expires: number;
}

interface FcmError {
  error?: {
    code?: number;
    status?: string;
    message?: string;
    details?: { '@type'?: string; errorCode?: string; fieldViolations?: { field?: string }[] }[];
  };
}

export class FcmSender {
  private credentials: { value: FcmCredentials | undefined; read: number } | undefined;
  private access: AccessToken | undefined;
  private pending: Promise<AccessToken> | undefined;

  constructor(private readonly deps: FcmSenderDeps) {}

  private async credentialsNow(): Promise<FcmCredentials | undefined> {
    const now = this.deps.clock.now();
    if (this.credentials && now - this.credentials.read < CREDENTIALS_TTL_MS) return this.credentials.value;
    const value = await this.deps.credentials();
    this.credentials = { value, read: now };
    return value;
  }

  /** The cached access token of these credentials, or a new one (one request at a time). */
  private accessToken(credentials: FcmCredentials): Promise<AccessToken> {
    const key = `${credentials.client_email} ${credentials.private_key_id}`;
    const now = this.deps.clock.now();
    if (this.access && this.access.key === key && now < this.access.expires - EXPIRY_MARGIN_MS)
      return Promise.resolve(this.access);
    this.pending ??= this.fetchAccessToken(credentials, key).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async fetchAccessToken(credentials: FcmCredentials, key: string): Promise<AccessToken> {
    const issued = Math.floor(this.deps.clock.now() / 1000);
    const assertion = await signJwt(
      'RS256',
      credentials.private_key_id ? { kid: credentials.private_key_id } : {},
      {
        iss: credentials.client_email,
        scope: FCM_SCOPE,
        aud: this.deps.tokenUrl,
        iat: issued,
        exp: issued + 3600,
      },
      createPrivateKey(credentials.private_key),
    );
    const url = new URL(this.deps.tokenUrl);
    const answer = await this.deps.pool.request(url.origin, credentials.client_email, {
      method: 'POST',
      path: `${url.pathname}${url.search}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
        assertion,
      }).toString(),
    });
    const body = safeJson(answer.body) as { access_token?: unknown; expires_in?: unknown };
    if (answer.status !== 200 || typeof body.access_token !== 'string')
      throw new Error(`OAuth2 token endpoint answered ${answer.status}`);
    const lifetime = typeof body.expires_in === 'number' ? body.expires_in : 3600;
    this.access = { key, token: body.access_token, expires: this.deps.clock.now() + lifetime * 1000 };
    return this.access;
  }

  async send(registration: PushRegistrationTable, payload: string, created: number): Promise<SendOutcome> {
    const credentials = await this.credentialsNow();
    if (!credentials)
      return { kind: 'drop', reason: 'no FCM credential is set (zentrale-admin push-fcm set)' };
    const remaining = Math.max(0, DELIVERY_LIFETIME_S - Math.floor((this.deps.clock.now() - created) / 1000));
    const body = JSON.stringify({
      message: {
        token: registration.device_token,
        data: JSON.parse(payload) as Record<string, string>,
        android: { priority: 'HIGH', ttl: `${remaining}s` },
      },
    });
    for (let attempt = 0; ; attempt++) {
      const access = await this.accessToken(credentials);
      const answer = await this.deps.pool.request(this.deps.fcmUrl, credentials.client_email, {
        method: 'POST',
        path: `/v1/projects/${credentials.project_id}/messages:send`,
        headers: { authorization: `Bearer ${access.token}`, 'content-type': 'application/json' },
        body,
      });
      if (answer.status === 200) return { kind: 'sent' };
      const error = (safeJson(answer.body) as FcmError).error ?? {};
      const codes = (error.details ?? []).map((detail) => detail.errorCode).filter(Boolean);
      const reason = `${answer.status} ${codes[0] ?? error.status ?? ''}`.trim();
      if (answer.status === 404 || codes.includes('UNREGISTERED') || codes.includes('SENDER_ID_MISMATCH'))
        return { kind: 'gone', reason };
      if (answer.status === 400) {
        const aboutToken = (error.details ?? []).some((detail) =>
          (detail.fieldViolations ?? []).some((violation) => violation.field === 'message.token'),
        );
        if (aboutToken || /registration token/i.test(error.message ?? '')) return { kind: 'gone', reason };
        return { kind: 'drop', reason };
      }
      if (answer.status === 401) {
        // The access token was refused: a new one, once, at once.
        this.access = undefined;
        if (attempt === 0) continue;
        return { kind: 'retry', reason };
      }
      if (answer.status === 429 || answer.status >= 500)
        return {
          kind: 'retry',
          afterMs: retryAfterMs(answer.headers['retry-after'], this.deps.clock.now()),
          reason,
        };
      return { kind: 'drop', reason };
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) ?? {};
  } catch {
    return {};
  }
}
