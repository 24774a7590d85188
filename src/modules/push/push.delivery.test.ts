/**
 * Push delivery against local HTTP/2 stand-ins of FCM, its OAuth2
 * token endpoint and APNs (test/push-services.ts), which verify the JWTs with the public keys
 * and answer with the services' documented errors.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { type Client, DIALECTS, type Dialect, loggedInClient, testEnv, until } from '../../../test/helper.js';
import { linkUsers } from '../../../test/object-store.js';
import { ANSWERS, PushStandIns } from '../../../test/push-services.js';
import { type App, buildApp } from '../../app.js';
import { systemClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';
import { CallAreaRecorder } from '../call/index.js';

const APP_ID = 'ABCDE12345.com.example.app';
const TEAM = 'TEAM123456';
const KEY_ID = 'KEY1234567';
const PROJECT = 'zentrale-test';
const EMAIL = 'push@zentrale-test.iam.gserviceaccount.com';
const apnsToken = (n: number) => n.toString(16).padStart(64, 'c');

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const SERVICE_ACCOUNT = JSON.stringify({
  type: 'service_account',
  project_id: PROJECT,
  private_key_id: 'abc123def456',
  private_key: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  client_email: EMAIL,
  token_uri: 'https://oauth2.googleapis.com/token',
});

async function standIns(t: TestContext): Promise<PushStandIns> {
  const services = await new PushStandIns({
    fcm: { projectId: PROJECT, clientEmail: EMAIL, publicKey: rsa.publicKey },
    apnsKeys: new Map([[KEY_ID, { teamId: TEAM, publicKey: ec.publicKey }]]),
  }).start();
  t.after(() => services.close());
  return services;
}

/** A node pointed at the stand-ins, with the operator's credentials in place. */
async function node(t: TestContext, env: Record<string, string>): Promise<App> {
  const app = await buildApp(loadConfig(env));
  t.after(() => app.close());
  return app;
}

async function credentials(app: App): Promise<void> {
  await app.services.pushFcmCredentials.setCredential(SERVICE_ACCOUNT);
  await app.services.pushApplications.addApplication({
    applicationId: APP_ID,
    teamId: TEAM,
    keyId: KEY_ID,
    privateKey: ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  });
}

async function register(client: Client, body: Record<string, unknown>): Promise<void> {
  assert.equal((await client.call('POST', '/api/push', { action: 'add', ...body })).status, 'ok');
}

const queueLength = async (app: App) =>
  Number(
    (
      await app.database.db
        .selectFrom('push_delivery')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** A WAV file of `samples` silent 16-bit samples at 8 kHz, mono. */
function wav8k(samples: number): Uint8Array {
  const data = samples * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data, 40);
  return Buffer.concat([header, Buffer.alloc(data)]);
}

for (const dialect of DIALECTS) {
  describe(`push delivery (${dialect})`, () => {
    test('every message to FCM and APNs: paths, headers, JWTs, payload types; one connection per service', async (t) => {
      const services = await standIns(t);
      const app = await node(t, await testEnv(t, dialect, services.env));
      await credentials(app);
      const { client, user } = await loggedInClient(app);
      await register(client, { system: 'fcm', device_token: 'fcm-token-1' });
      await register(client, { system: 'apns', device_token: apnsToken(1), application_id: APP_ID });
      await register(client, {
        system: 'apns',
        device_token: apnsToken(2),
        application_id: APP_ID,
        sandbox: true,
        apns_topic: 'com.example.app.voip',
      });
      const owner = user.uuid;
      const push = app.services.push;
      assert.equal(await push.faxNew(owner, { fax: 'f-uuid', phone: '+4930111', page_count: 3 }), 3);
      await push.recordingNew(owner, { recording: 'r-uuid', phone: '+4930222' });
      // Call-reverse pushes join the write that records the process (the call directory's).
      for (const phase of ['start', 'stop'] as const)
        await app.services.writer.write((w) =>
          push.callReverse(owner, phase, { phone_from: '+4930333', phone_to: '+4930444' }, w),
        );
      await push.ruleEngineNotification(owner, 'rule-uuid', { text: 'door open', level: 2 });
      // chat_message through the chat API: another participant writes.
      const { client: other, user: otherUser } = await loggedInClient(app, {
        firstname: 'Bo',
        lastname: 'B.',
      });
      await linkUsers(app, otherUser.uuid, owner);
      const chat = (await other.call('POST', '/api/chat', {})).uuid as string;
      assert.equal((await other.call('POST', `/api/chat/${chat}/user`, { add: [owner] })).status, 'ok');
      const message = await other.call('POST', `/api/chat/${chat}/message`, { text: 'hello' });

      const fcm = await services.waitFor('fcm', 6);
      const apns = await services.waitFor('apns', 6);
      const sandbox = await services.waitFor('apns-sandbox', 6);

      // FCM: one OAuth2 token for all, its assertion verified with the public key by the stand-in.
      const [oauth, ...moreTokens] = services.requests.filter((request) => request.service === 'oauth');
      assert.equal(moreTokens.length, 0);
      assert.deepEqual(oauth?.jwt?.header, { alg: 'RS256', typ: 'JWT', kid: 'abc123def456' });
      assert.equal(oauth?.jwt?.claims.iss, EMAIL);
      assert.equal(oauth?.jwt?.claims.aud, services.urls.oauth);
      assert.equal(oauth?.jwt?.claims.scope, 'https://www.googleapis.com/auth/firebase.messaging');
      const data = fcm.map((request) => {
        assert.equal(request.path, `/v1/projects/${PROJECT}/messages:send`);
        assert.equal(request.headers.authorization, 'Bearer ya29.stand-in-1');
        const body = JSON.parse(request.body) as {
          message: { token: string; data: Record<string, string>; android: unknown };
        };
        assert.equal(body.message.token, 'fcm-token-1');
        assert.equal((body.message.android as { priority: string }).priority, 'HIGH');
        return body.message.data;
      });
      const byMessage = (list: Record<string, unknown>[]) =>
        new Map(list.map((entry) => [entry.message, entry]));
      const android = byMessage(data);
      assert.deepEqual(android.get('fax_new'), {
        message: 'fax_new',
        owner,
        fax: 'f-uuid',
        phone: '+4930111',
        page_count: '3',
      });
      assert.deepEqual(android.get('recording_new'), {
        message: 'recording_new',
        owner,
        recording: 'r-uuid',
        phone: '+4930222',
      });
      assert.deepEqual(android.get('dialplan_callreverse_start'), {
        message: 'dialplan_callreverse_start',
        owner,
        phone_from: '+4930333',
        phone_to: '+4930444',
      });
      assert.ok(android.has('dialplan_callreverse_stop'));
      assert.deepEqual(android.get('rule_engine_notification'), {
        message: 'rule_engine_notification',
        rule: 'rule-uuid',
        content: '{"text":"door open","level":2}',
      });
      const androidChat = android.get('chat_message') as Record<string, string>;
      assert.equal(androidChat.uuid, message.uuid);
      assert.equal(androidChat.text, 'hello');
      assert.equal(androidChat.user_name, 'Bo B.');
      assert.equal(typeof androidChat.time, 'string');

      // APNs: production for one token, sandbox with its own topic for the other.
      for (const [requests, token, topic] of [
        [apns, apnsToken(1), 'com.example.app'],
        [sandbox, apnsToken(2), 'com.example.app.voip'],
      ] as const) {
        for (const request of requests) {
          assert.equal(request.path, `/3/device/${token}`);
          assert.equal(request.headers['apns-topic'], topic);
          assert.equal(request.headers['apns-push-type'], 'background');
          assert.equal(request.headers['apns-priority'], '5');
          assert.deepEqual(request.jwt?.header, { alg: 'ES256', typ: 'JWT', kid: KEY_ID });
          assert.equal(request.jwt?.claims.iss, TEAM);
        }
      }
      const ios = byMessage(apns.map((request) => JSON.parse(request.body) as Record<string, unknown>));
      assert.deepEqual(ios.get('fax_new'), {
        message: 'fax_new',
        owner,
        fax: 'f-uuid',
        phone: '+4930111',
        page_count: 3,
        aps: { 'content-available': 1 },
      });
      assert.deepEqual(ios.get('rule_engine_notification'), {
        message: 'rule_engine_notification',
        rule: 'rule-uuid',
        content: { text: 'door open', level: 2 },
        aps: { 'content-available': 1 },
      });
      assert.equal(typeof (ios.get('chat_message') as { time: unknown }).time, 'number');

      // One connection per service and credential, reused.
      assert.deepEqual(services.connections, { oauth: 1, fcm: 1, apns: 1, 'apns-sandbox': 1 });
      await until(async () => (await queueLength(app)) === 0, 'the queue is empty');
      // The sender's own devices are not told of their own message.
      const otherTokens = await other.call('GET', '/api/push');
      assert.deepEqual(otherTokens.fcm, { device_tokens: [] });
    });

    test("a voicemail stored by the call engine reaches the owner's devices as recording_new", async (t) => {
      const services = await standIns(t);
      const app = await node(t, await testEnv(t, dialect, services.env));
      await credentials(app);
      const { client, user } = await loggedInClient(app);
      await register(client, { system: 'fcm', device_token: 'voicemail-phone' });
      const directory = new CallAreaRecorder(app.services, app.database.db, app.server.log, systemClock);
      const recording = await directory.storeVoicemail({
        owner: user.uuid,
        from: '+4930555',
        to: '+4930666',
        wav: wav8k(800),
      });
      const [request] = await services.waitFor('fcm', 1);
      assert.deepEqual((JSON.parse(request?.body ?? '{}') as { message: { data: unknown } }).message.data, {
        message: 'recording_new',
        owner: user.uuid,
        recording,
        phone: '+4930555',
      });
    });

    test('unregistered and invalid tokens are removed; 429, 503 and a stale provider token are retried', async (t) => {
      const services = await standIns(t);
      const app = await node(t, await testEnv(t, dialect, services.env));
      await credentials(app);
      const { client, user } = await loggedInClient(app);
      const { client: bystander, user: bystanderUser } = await loggedInClient(app);
      await register(bystander, { system: 'fcm', device_token: 'bystander' });
      const apnsTokens = [1, 2, 3, 4, 5].map(apnsToken);
      for (const token of apnsTokens)
        await register(client, { system: 'apns', device_token: token, application_id: APP_ID });
      for (const token of ['gone-1', 'gone-2', 'busy-1', 'busy-2'])
        await register(client, { system: 'fcm', device_token: token });
      services.script.set(apnsTokens[0] as string, [ANSWERS.apnsUnregistered]);
      services.script.set(apnsTokens[1] as string, [ANSWERS.apnsBadDeviceToken]);
      services.script.set(apnsTokens[2] as string, [ANSWERS.apnsTooMany]);
      services.script.set(apnsTokens[3] as string, [ANSWERS.apnsUnavailable]);
      services.script.set(apnsTokens[4] as string, [ANSWERS.apnsExpiredProviderToken]);
      services.script.set('gone-1', [ANSWERS.fcmUnregistered]);
      services.script.set('gone-2', [ANSWERS.fcmInvalidToken]);
      services.script.set('busy-1', [ANSWERS.fcmQuota]);
      services.script.set('busy-2', [ANSWERS.fcmUnavailable]);

      await app.services.push.recordingNew(user.uuid, { recording: 'r', phone: '+4930111' });
      await until(async () => (await queueLength(app)) === 0, 'the queue is empty');

      const registrations = await client.call('GET', '/api/push');
      assert.deepEqual(registrations.fcm, { device_tokens: ['busy-1', 'busy-2'] });
      assert.deepEqual(Object.keys((registrations.apns as { device_tokens: object }).device_tokens).sort(), [
        apnsTokens[2],
        apnsTokens[3],
        apnsTokens[4],
      ]);
      const tried = (token: string) =>
        services.requests.filter(
          (request) => request.path.endsWith(token) || request.body.includes(`"${token}"`),
        ).length;
      // Retried ones were sent twice (the second answered 200); removed ones once.
      for (const token of [apnsTokens[2], apnsTokens[3], apnsTokens[4], 'busy-1', 'busy-2'] as string[])
        assert.equal(tried(token), 2, token);
      for (const token of [apnsTokens[0], apnsTokens[1], 'gone-1', 'gone-2'] as string[])
        assert.equal(tried(token), 1, token);
      assert.equal(services.delivered.apns, 3);
      assert.equal(services.delivered.fcm, 2);
      // Another user's registration is untouched.
      assert.deepEqual((await bystander.call('GET', '/api/push')).fcm, { device_tokens: ['bystander'] });
      assert.ok(bystanderUser);
    });

    test('an access token FCM refuses (401) is replaced at once and the push sent with the new one', async (t) => {
      const services = await standIns(t);
      const app = await node(t, await testEnv(t, dialect, services.env));
      await credentials(app);
      const { client, user } = await loggedInClient(app);
      await register(client, { system: 'fcm', device_token: 'fcm-401' });
      await app.services.push.recordingNew(user.uuid, { recording: 'one', phone: '+4930111' });
      await services.waitFor('fcm', 1);
      services.revokeAccessTokens();
      await app.services.push.recordingNew(user.uuid, { recording: 'two', phone: '+4930111' });
      const fcm = await services.waitFor('fcm', 3);
      assert.deepEqual(
        fcm.map((request) => request.headers.authorization),
        ['Bearer ya29.stand-in-1', 'Bearer ya29.stand-in-1', 'Bearer ya29.stand-in-3'],
      );
      assert.equal(services.delivered.fcm, 2);
      assert.equal(services.requests.filter((request) => request.service === 'oauth').length, 2);
      await until(async () => (await queueLength(app)) === 0, 'the queue is empty');
    });

    test('queued deliveries survive a restart', async (t) => {
      const services = await standIns(t);
      const env = await testEnv(t, dialect, services.env);
      // The first node cannot reach APNs (nothing listens there).
      const first = await buildApp(loadConfig({ ...env, PUSH_APNS_URL: 'https://127.0.0.1:9' }));
      await credentials(first);
      const { client, user } = await loggedInClient(first);
      await register(client, { system: 'apns', device_token: apnsToken(7), application_id: APP_ID });
      await first.services.push.recordingNew(user.uuid, { recording: 'kept', phone: '+4930111' });
      await until(async () => {
        const row = await first.database.db.selectFrom('push_delivery').select('attempts').executeTakeFirst();
        return (row?.attempts ?? 0) >= 1;
      }, 'a first attempt failed');
      await first.close();
      const second = await node(t, env);
      const [delivered] = await services.waitFor('apns', 1);
      assert.equal((JSON.parse(delivered?.body ?? '{}') as { recording: string }).recording, 'kept');
      await until(async () => (await queueLength(second)) === 0, 'the queue is empty');
    });

    if (dialect === 'postgres') twoNodes(dialect);
  });
}

function twoNodes(dialect: Dialect) {
  test('two nodes on one PostgreSQL send each delivery once', async (t) => {
    const services = await standIns(t);
    // Both nodes open the sealed keys: the same SECRET_KEY (README "Configuration").
    const env = await testEnv(t, dialect, { ...services.env, SECRET_KEY: randomBytes(32).toString('hex') });
    const a = await node(t, env);
    const b = await node(t, { ...env, DATA_DIR: (await testEnv(t, 'sqlite')).DATA_DIR as string });
    await credentials(a);
    const { client, user } = await loggedInClient(a);
    const tokens = Array.from({ length: 20 }, (_, i) => apnsToken(100 + i));
    for (const token of tokens)
      await register(client, { system: 'apns', device_token: token, application_id: APP_ID });
    // Queued while neither node's worker looks (rows straight into the queue), then both are woken.
    const now = Date.now();
    const rows = Array.from({ length: 600 }, (_, i) => ({
      id: `d-${i}`,
      user_uuid: user.uuid,
      system: 'apns' as const,
      device_token: tokens[i % tokens.length] as string,
      payload: JSON.stringify({
        message: 'recording_new',
        recording: `r-${i}`,
        aps: { 'content-available': 1 },
      }),
      attempts: 0,
      due: now,
      lease_until: 0,
      created: now,
    }));
    await a.database.db.insertInto('push_delivery').values(rows).execute();
    a.services.pushDelivery.kick();
    b.services.pushDelivery.kick();
    await until(async () => (await queueLength(a)) === 0, 'the queue is empty', 30_000);
    await Promise.all([a.services.pushDelivery.stop(), b.services.pushDelivery.stop()]);
    const recordings = services.requests
      .filter((request) => request.service === 'apns')
      .map((request) => (JSON.parse(request.body) as { recording: string }).recording);
    assert.equal(recordings.length, 600);
    assert.equal(new Set(recordings).size, 600);
    assert.equal(a.services.pushDelivery.counts.sent + b.services.pushDelivery.counts.sent, 600);
  });
}
