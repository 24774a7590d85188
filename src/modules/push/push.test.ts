import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, test } from 'node:test';
import { build, DIALECTS } from '../../../test/helper.js';
import { ApiError } from '../../platform/errors.js';

const rejectsWith = (promise: Promise<unknown>, status: string) =>
  assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.status === status);

function p8(curve = 'prime256v1'): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: curve });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

const APP = { applicationId: 'ABCDE12345.com.example.app', teamId: 'ABCDE12345', keyId: 'KEY1234567' };

for (const dialect of DIALECTS) {
  describe(`push application ids (${dialect})`, () => {
    test('add, list without keys, credentials for sending, delete; already-exist, unknown-appid', async (t) => {
      const app = await build(t, { dialect });
      const push = app.services.pushApplications;
      const key = p8();
      const added = await push.addApplication({ ...APP, privateKey: key });
      assert.deepEqual(Object.keys(added).sort(), ['application_id', 'created', 'key_id', 'team_id']);
      const listed = await push.listApplications();
      assert.equal(listed.length, 1);
      assert.ok(!JSON.stringify(listed).includes('PRIVATE KEY'));
      assert.equal((await push.findCredentials(APP.applicationId))?.private_key, key);
      await rejectsWith(push.addApplication({ ...APP, privateKey: key }), 'already-exist');
      await push.deleteApplication(APP.applicationId);
      assert.deepEqual(await push.listApplications(), []);
      assert.equal(await push.findCredentials(APP.applicationId), undefined);
      await rejectsWith(push.deleteApplication(APP.applicationId), 'unknown-appid');
    });

    test('invalid-appid for a bad id; wrong-syntax for bad team, key id, or a key APNs cannot use', async (t) => {
      const app = await build(t, { dialect });
      const push = app.services.pushApplications;
      const key = p8();
      await rejectsWith(
        push.addApplication({ ...APP, applicationId: 'short.app', privateKey: key }),
        'invalid-appid',
      );
      await rejectsWith(push.addApplication({ ...APP, teamId: 'ABC', privateKey: key }), 'wrong-syntax');
      await rejectsWith(
        push.addApplication({ ...APP, keyId: 'KEY-123456', privateKey: key }),
        'wrong-syntax',
      );
      await rejectsWith(push.addApplication({ ...APP, privateKey: 'not a key' }), 'wrong-syntax');
      await rejectsWith(push.addApplication({ ...APP, privateKey: p8('secp384r1') }), 'wrong-syntax');
      const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
        type: 'pkcs8',
        format: 'pem',
      });
      await rejectsWith(push.addApplication({ ...APP, privateKey: rsa.toString() }), 'wrong-syntax');
      assert.deepEqual(await push.listApplications(), []);
    });
  });
}
