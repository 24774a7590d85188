/** Token lifetimes of the push senders, on a clock of the test's own (no waiting). */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../platform/config.js';
import { ApiError } from '../../platform/errors.js';
import { ApnsSender, PROVIDER_TOKEN_LIFETIME_MS } from './push.apns.js';
import { FcmSender } from './push.fcm.js';
import type { Http2Pool, Http2Request, Http2Response } from './push.http2.js';
import { RULE_PUSH_LIMIT, ruleNotification } from './push.messages.js';
import type { PushRegistrationTable } from './push.repository.js';

class FakePool {
  readonly requests: (Http2Request & { origin: string; credential: string })[] = [];
  answer: (request: Http2Request) => Http2Response = () => ({ status: 200, headers: {}, body: '' });
  async request(origin: string, credential: string, request: Http2Request): Promise<Http2Response> {
    this.requests.push({ ...request, origin, credential });
    return this.answer(request);
  }
}

const claims = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, number>;

const registration = (system: 'fcm' | 'apns', token: string): PushRegistrationTable => ({
  system,
  device_token: token,
  user_uuid: 'u',
  application_id: system === 'apns' ? 'ABCDE12345.com.example.app' : null,
  sandbox: 0,
  apns_topic: null,
  created: 0,
});

test('APNs provider tokens are reused for 30 minutes, then renewed (Apple: at most an hour old)', async () => {
  let clock = Date.UTC(2026, 0, 1);
  const pool = new FakePool();
  const privateKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const sender = new ApnsSender({
    pool: pool as unknown as Http2Pool,
    productionUrl: 'https://apns.test',
    sandboxUrl: 'https://sandbox.apns.test',
    credentials: async (id) => ({
      application_id: id,
      team_id: 'TEAM123456',
      key_id: 'KEY1234567',
      created: 0,
      private_key: privateKey,
    }),
    clock: { now: () => clock },
  });
  const send = () => sender.send(registration('apns', 'ab'.repeat(32)), '{}', clock);
  await send();
  clock += PROVIDER_TOKEN_LIFETIME_MS - 1000;
  await send();
  clock += 2000;
  await send();
  const tokens = pool.requests.map((request) => request.headers.authorization?.replace('bearer ', '') ?? '');
  assert.equal(tokens[0], tokens[1]);
  assert.notEqual(tokens[1], tokens[2]);
  assert.equal(claims(tokens[2] as string).iat, Math.floor(clock / 1000));
  assert.ok(PROVIDER_TOKEN_LIFETIME_MS <= 60 * 60 * 1000);
  assert.deepEqual(
    new Set(pool.requests.map((request) => `${request.origin} ${request.credential}`)).size,
    1,
  );
});

test('FCM access tokens are cached until a minute before they expire', async () => {
  let clock = Date.UTC(2026, 0, 1);
  const pool = new FakePool();
  let issued = 0;
  pool.answer = (request) =>
    request.path === '/token'
      ? { status: 200, headers: {}, body: JSON.stringify({ access_token: `t${++issued}`, expires_in: 3600 }) }
      : { status: 200, headers: {}, body: '{}' };
  const sender = new FcmSender({
    pool: pool as unknown as Http2Pool,
    fcmUrl: 'https://fcm.test',
    tokenUrl: 'https://oauth.test/token',
    credentials: async () => ({
      project_id: 'p',
      client_email: 'a@b',
      private_key_id: 'k',
      private_key: generateKeyPairSync('rsa', { modulusLength: 2048 })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
    }),
    clock: { now: () => clock },
  });
  const send = () => sender.send(registration('fcm', 'tok'), '{"message":"x"}', clock);
  await Promise.all([send(), send(), send()]);
  clock += 3600_000 - 61_000;
  await send();
  clock += 2000;
  await send();
  const used = pool.requests
    .filter((request) => request.path !== '/token')
    .map((request) => request.headers.authorization);
  assert.deepEqual(used, ['Bearer t1', 'Bearer t1', 'Bearer t1', 'Bearer t1', 'Bearer t2']);
  assert.equal(issued, 2);
});

test('push service addresses are configuration, checked at start', () => {
  const config = loadConfig({});
  assert.equal(config.pushFcmUrl, 'https://fcm.googleapis.com');
  assert.equal(config.pushOauthTokenUrl, 'https://oauth2.googleapis.com/token');
  assert.equal(config.pushApnsUrl, 'https://api.push.apple.com');
  assert.equal(config.pushApnsSandboxUrl, 'https://api.sandbox.push.apple.com');
  const set = loadConfig({
    PUSH_FCM_URL: 'https://127.0.0.1:9001',
    PUSH_OAUTH_TOKEN_URL: 'https://127.0.0.1:9002/token',
    PUSH_APNS_URL: 'https://127.0.0.1:9003/',
    PUSH_APNS_SANDBOX_URL: 'http://127.0.0.1:9004',
  });
  assert.equal(set.pushFcmUrl, 'https://127.0.0.1:9001');
  assert.equal(set.pushOauthTokenUrl, 'https://127.0.0.1:9002/token');
  assert.equal(set.pushApnsUrl, 'https://127.0.0.1:9003');
  assert.equal(set.pushApnsSandboxUrl, 'http://127.0.0.1:9004');
  assert.throws(() => loadConfig({ PUSH_APNS_URL: 'https://h/3/device' }), ConfigError);
  assert.throws(() => loadConfig({ PUSH_FCM_URL: 'ftp://h' }), ConfigError);
  assert.throws(() => loadConfig({ PUSH_OAUTH_TOKEN_URL: 'not a url' }), ConfigError);
});

test('rule_engine_notification: the whole message is at most 2048 bytes (too-large beyond)', () => {
  const overhead = JSON.stringify({ message: 'rule_engine_notification', rule: 'r', content: '' }).length;
  const fits = 'x'.repeat(RULE_PUSH_LIMIT - overhead);
  assert.equal(Buffer.byteLength(JSON.stringify(ruleNotification('r', fits))), RULE_PUSH_LIMIT);
  assert.throws(
    () => ruleNotification('r', `${fits}x`),
    (error: unknown) => error instanceof ApiError && error.status === 'too-large',
  );
  // Bytes, not characters.
  assert.throws(() => ruleNotification('r', 'ü'.repeat(1100)), ApiError);
});
