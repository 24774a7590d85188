import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { SettableClock } from '../../platform/clock.js';
import { MAX_REGISTRATIONS } from './push.service.js';

const APP_ID = 'ABCDE12345.com.example.app';
const p8 = () =>
  generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
const apnsToken = (n: number) => n.toString(16).padStart(64, 'a');
const FCM = 'dXs1:APA91bH-fcm_token.0';

for (const dialect of DIALECTS) {
  describe(`push registration (${dialect})`, () => {
    test('GET/POST /api/push: add and delete on both systems, every status, nothing changes on a failure', async (t) => {
      const app = await build(t, { dialect });
      await app.services.pushApplications.addApplication({
        applicationId: APP_ID,
        teamId: 'ABCDE12345',
        keyId: 'KEY1234567',
        privateKey: p8(),
      });
      const { client } = await loggedInClient(app);
      const empty = { status: 'ok', fcm: { device_tokens: [] }, apns: { device_tokens: {} } };
      assert.deepEqual(await client.call('GET', '/api/push'), empty);

      const post = (body: Record<string, unknown>) => client.call('POST', '/api/push', body);
      assert.equal((await post({ system: 'fcm', action: 'add', device_token: FCM })).status, 'ok');
      assert.equal(
        (
          await post({
            system: 'apns',
            action: 'add',
            device_token: apnsToken(1).toUpperCase(),
            application_id: APP_ID,
          })
        ).status,
        'ok',
      );
      assert.equal(
        (
          await post({
            system: 'apns',
            action: 'add',
            device_token: apnsToken(2),
            application_id: APP_ID,
            sandbox: true,
            apns_topic: 'com.example.app.voip',
          })
        ).status,
        'ok',
      );
      const full = {
        status: 'ok',
        fcm: { device_tokens: [FCM] },
        apns: {
          device_tokens: {
            [apnsToken(1)]: { application_id: APP_ID, sandbox: false },
            [apnsToken(2)]: { application_id: APP_ID, sandbox: true, apns_topic: 'com.example.app.voip' },
          },
        },
      };
      assert.deepEqual(await client.call('GET', '/api/push'), full);

      for (const [body, status] of [
        [{ action: 'add', device_token: FCM }, 'missing-element'],
        [{ system: 'fcm', device_token: FCM }, 'missing-element'],
        [{ system: 'fcm', action: 'add' }, 'missing-element'],
        [{ system: 'fcm', action: 'delete' }, 'missing-element'],
        [{ system: 'apns', action: 'delete' }, 'missing-element'],
        [{ system: 'apns', action: 'add', device_token: apnsToken(3) }, 'missing-element'],
        [{ system: 'gcm', action: 'add', device_token: FCM }, 'wrong-syntax'],
        [{ system: 'fcm', action: 'modify', device_token: FCM }, 'wrong-syntax'],
        [{ system: 'fcm', action: 'add', device_token: 'bad token' }, 'wrong-syntax'],
        [{ system: 'apns', action: 'add', device_token: 'xyz', application_id: APP_ID }, 'wrong-syntax'],
        [
          {
            system: 'apns',
            action: 'add',
            device_token: apnsToken(3),
            application_id: APP_ID,
            sandbox: 'yes',
          },
          'wrong-syntax',
        ],
        [
          { system: 'apns', action: 'add', device_token: apnsToken(3), application_id: 'short.app' },
          'invalid-appid',
        ],
        [
          { system: 'apns', action: 'add', device_token: apnsToken(3), application_id: 'ABCDE12345.x' },
          'invalid-appid',
        ],
        [
          {
            system: 'apns',
            action: 'add',
            device_token: apnsToken(3),
            application_id: APP_ID,
            apns_topic: 'a b c d e',
          },
          'invalid-apns-topic',
        ],
        [
          {
            system: 'apns',
            action: 'add',
            device_token: apnsToken(3),
            application_id: APP_ID,
            apns_topic: 'abc',
          },
          'invalid-apns-topic',
        ],
        [
          {
            system: 'apns',
            action: 'add',
            device_token: apnsToken(3),
            application_id: 'ZZZZZ99999.com.example.app',
          },
          'unknown-appid',
        ],
      ] as const) {
        const answer = await post(body);
        assert.equal(answer.status, status, JSON.stringify(body));
      }
      assert.deepEqual(await client.call('GET', '/api/push'), full);

      // fcm delete needs the token; apns delete only the token.
      assert.equal((await post({ system: 'fcm', action: 'delete', device_token: FCM })).status, 'ok');
      assert.equal(
        (await post({ system: 'apns', action: 'delete', device_token: apnsToken(1) })).status,
        'ok',
      );
      assert.deepEqual(await client.call('GET', '/api/push'), {
        status: 'ok',
        fcm: { device_tokens: [] },
        apns: { device_tokens: { [apnsToken(2)]: full.apns.device_tokens[apnsToken(2)] } },
      });
      // Deleting what is not registered is ok and changes nothing.
      assert.equal((await post({ system: 'fcm', action: 'delete', device_token: FCM })).status, 'ok');
    });

    test("another user's tokens are never visible or deletable; re-registering moves a token", async (t) => {
      const app = await build(t, { dialect });
      const { client: alice, user: aliceUser } = await loggedInClient(app);
      const { client: bob, user: bobUser } = await loggedInClient(app);
      await alice.call('POST', '/api/push', { system: 'fcm', action: 'add', device_token: FCM });
      assert.deepEqual((await bob.call('GET', '/api/push')).fcm, { device_tokens: [] });
      assert.equal(
        (await bob.call('POST', '/api/push', { system: 'fcm', action: 'delete', device_token: FCM })).status,
        'ok',
      );
      assert.deepEqual((await alice.call('GET', '/api/push')).fcm, { device_tokens: [FCM] });
      // A queued message of Alice's is not carried over when the token moves to Bob.
      assert.equal(
        await app.services.push.recordingNew(aliceUser.uuid, { recording: 'r', phone: '+4930111' }),
        1,
      );
      await bob.call('POST', '/api/push', { system: 'fcm', action: 'add', device_token: FCM });
      assert.deepEqual((await alice.call('GET', '/api/push')).fcm, { device_tokens: [] });
      assert.deepEqual((await bob.call('GET', '/api/push')).fcm, { device_tokens: [FCM] });
      const queued = await app.database.db.selectFrom('push_delivery').select('user_uuid').execute();
      assert.deepEqual(queued, []);
      assert.equal(
        await app.services.push.recordingNew(aliceUser.uuid, { recording: 'r', phone: '+4930111' }),
        0,
      );
      assert.equal(
        await app.services.push.recordingNew(bobUser.uuid, { recording: 'r', phone: '+4930111' }),
        1,
      );
    });

    test(`a user keeps at most ${MAX_REGISTRATIONS} registrations; the oldest goes`, async (t) => {
      const clock = new SettableClock(1_000_000);
      const app = await build(t, { dialect, clock });
      const { client } = await loggedInClient(app);
      // Each registration a millisecond after the one before: the order of age is the order here.
      const add = async (token: string) => {
        clock.advance(1);
        await client.call('POST', '/api/push', { system: 'fcm', action: 'add', device_token: token });
      };
      for (let i = 0; i < MAX_REGISTRATIONS + 2; i++) await add(`token${i}`);
      // Adding token2 again refreshes it: it is no longer the oldest.
      await add('token2');
      await add('token99');
      const tokens = (await client.call('GET', '/api/push')).fcm as { device_tokens: string[] };
      assert.equal(tokens.device_tokens.length, MAX_REGISTRATIONS);
      for (const gone of ['token0', 'token1', 'token3'])
        assert.ok(!tokens.device_tokens.includes(gone), gone);
      assert.ok(tokens.device_tokens.includes('token2'));
      assert.ok(tokens.device_tokens.includes('token99'));
    });
  });
}
