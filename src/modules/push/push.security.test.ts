import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { build, DIALECTS, testEnv } from '../../../test/helper.js';
import { buildApp } from '../../app.js';
import { loadConfig } from '../../platform/config.js';

function p8(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

const APP = { applicationId: 'ABCDE12345.com.example.app', teamId: 'ABCDE12345', keyId: 'KEY1234567' };

for (const dialect of DIALECTS) {
  describe(`push: stored APNs keys are sealed (${dialect})`, () => {
    test('the stored column is not the clear key; the service returns the right key', async (t) => {
      const app = await build(t, { dialect });
      const key = p8();
      await app.services.pushApplications.addApplication({ ...APP, privateKey: key });
      const row = await app.database.db.selectFrom('push_application').selectAll().executeTakeFirstOrThrow();
      assert.ok(!row.private_key.includes('PRIVATE KEY'));
      assert.ok(!row.private_key.includes(key.split('\n')[1] ?? key));
      assert.equal(
        (await app.services.pushApplications.findCredentials(APP.applicationId))?.private_key,
        key,
      );
      // Without SECRET_KEY, a single node made its own key file, private to its user.
      const file = path.join(app.config.dataDir, 'secret.key');
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    });

    test('a key stored in clear is sealed on first read and at start', async (t) => {
      const env = await testEnv(t, dialect);
      const node = await buildApp(loadConfig(env));
      const [first, second] = [p8(), p8()];
      const rows = [
        { ...APP, private_key: first },
        { ...APP, applicationId: 'ABCDE12345.com.example.two', private_key: second },
      ].map((a) => ({
        application_id: a.applicationId,
        team_id: a.teamId,
        key_id: a.keyId,
        private_key: a.private_key,
        created: 1,
      }));
      await node.database.db.insertInto('push_application').values(rows).execute();
      assert.equal(
        (await node.services.pushApplications.findCredentials(APP.applicationId))?.private_key,
        first,
      );
      const stored = async (db: typeof node.database.db, id: string) =>
        (
          await db
            .selectFrom('push_application')
            .select('private_key')
            .where('application_id', '=', id)
            .executeTakeFirstOrThrow()
        ).private_key;
      assert.ok(!(await stored(node.database.db, APP.applicationId)).includes('PRIVATE KEY'));
      assert.ok((await stored(node.database.db, rows[1]!.application_id)).includes('PRIVATE KEY'));
      await node.close();
      const again = await buildApp(loadConfig(env));
      t.after(() => again.close());
      assert.ok(!(await stored(again.database.db, rows[1]!.application_id)).includes('PRIVATE KEY'));
      assert.equal(
        (await again.services.pushApplications.findCredentials(rows[1]!.application_id))?.private_key,
        second,
      );
    });

    if (dialect === 'postgres') {
      test("nodes with the same SECRET_KEY and their own DATA_DIR read each other's keys", async (t) => {
        const SECRET_KEY = randomBytes(32).toString('hex');
        const env = await testEnv(t, dialect, { SECRET_KEY });
        const nodeA = await buildApp(loadConfig(env));
        t.after(() => nodeA.close());
        const other = await testEnv(t, 'sqlite');
        const nodeB = await buildApp(
          loadConfig({ ...env, DATA_DIR: other.DATA_DIR!, PUBLIC_URL: 'http://127.0.0.2:8080' }),
        );
        t.after(() => nodeB.close());
        const key = p8();
        await nodeA.services.pushApplications.addApplication({ ...APP, privateKey: key });
        assert.equal(
          (await nodeB.services.pushApplications.findCredentials(APP.applicationId))?.private_key,
          key,
        );
        assert.ok(!fs.existsSync(path.join(nodeA.config.dataDir, 'secret.key')));
      });
    }
  });
}

test('SECRET_KEY must be 64 hex digits and is not echoed', () => {
  assert.throws(
    () => loadConfig({ SECRET_KEY: 'abc123' }),
    (error: Error) => /SECRET_KEY/.test(error.message) && !error.message.includes('abc123'),
  );
  assert.equal(loadConfig({ SECRET_KEY: 'A'.repeat(64) }).secretKey, 'a'.repeat(64));
});
