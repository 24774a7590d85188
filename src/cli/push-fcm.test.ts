import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { cliFor } from '../../test/cli.js';
import { DIALECTS, tempDir, testEnv } from '../../test/helper.js';
import { buildApp } from '../app.js';
import { loadConfig } from '../platform/config.js';

const rsaPem = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
const account = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'service_account',
    project_id: 'zentrale-test',
    private_key_id: 'abc123',
    private_key: rsaPem(),
    client_email: 'push@zentrale-test.iam.gserviceaccount.com',
    ...overrides,
  });

for (const dialect of DIALECTS) {
  describe(`operator CLI push-fcm (${dialect})`, () => {
    test('set from a file, show without the key, stored sealed, replace, delete; bad keys refused', async (t) => {
      const env = await testEnv(t, dialect);
      const cli = cliFor(env);
      const dir = tempDir(t);
      const file = path.join(dir, 'service-account.json');
      const json = account();
      fs.writeFileSync(file, json, { mode: 0o600 });

      assert.equal(await cli.json('push-fcm', 'show'), null);
      const set = await cli.json('push-fcm', 'set', '--key-file', file);
      assert.deepEqual(set, {
        project_id: 'zentrale-test',
        client_email: 'push@zentrale-test.iam.gserviceaccount.com',
        created: set.created,
      });
      const shown = await cli.run('push-fcm', 'show', '--json');
      assert.doesNotMatch(shown.stdout, /PRIVATE|BEGIN/);
      assert.deepEqual(JSON.parse(shown.stdout), set);

      const app = await buildApp(loadConfig(env));
      t.after(() => app.close());
      const row = await app.database.db
        .selectFrom('push_fcm_credential')
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.ok(row.credentials.startsWith('sealed:v1:'));
      assert.ok(!row.credentials.includes('PRIVATE KEY'));
      const opened = await app.services.pushFcmCredentials.findCredentials();
      assert.equal(opened?.private_key, JSON.parse(json).private_key);

      fs.writeFileSync(file, account({ project_id: 'other-project' }));
      assert.equal((await cli.json('push-fcm', 'set', '--key-file', file)).project_id, 'other-project');

      for (const [content, message] of [
        ['not json', /not JSON/],
        [account({ type: 'authorized_user' }), /service_account/],
        [account({ project_id: 'Bad Project' }), /project_id/],
        [account({ private_key: 'nope' }), /private_key/],
        [
          account({
            private_key: generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
              .privateKey.export({ type: 'pkcs8', format: 'pem' })
              .toString(),
          }),
          /RSA/,
        ],
      ] as const) {
        fs.writeFileSync(file, content);
        await cli.fails(2, message, 'push-fcm', 'set', '--key-file', file);
      }
      await cli.fails(
        2,
        /cannot read --key-file/,
        'push-fcm',
        'set',
        '--key-file',
        path.join(dir, 'missing'),
      );
      assert.equal((await cli.json('push-fcm', 'show')).project_id, 'other-project');
      assert.deepEqual(await cli.json('push-fcm', 'delete'), { deleted: true });
      await cli.fails(1, /empty-data/, 'push-fcm', 'delete');
    });
  });
}
