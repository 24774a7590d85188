/**
 * The operator tool as an attacker on the same machine sees it: secrets never travel as
 * arguments (the process list and the shell history show those), a bad DATABASE_URL is not
 * echoed with its password, and set-password ends the user's sessions.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cliFor } from '../../test/cli.js';
import { Client, DIALECTS, secretFile, tempDir, testEnv } from '../../test/helper.js';
import { buildApp } from '../app.js';
import { loadConfig } from '../platform/config.js';

function run(env: Record<string, string>, ...args: string[]) {
  return cliFor(env).run(...args);
}

test('secrets as arguments are refused; a missing secret file is a usage error', async (t) => {
  const env = await testEnv(t);
  for (const args of [
    ['partner', 'create', '--name', 'acme', '--key', 'acme-key'],
    ['user', 'create', '--username', 'al', '--password', 'pw-pw-pw', '--firstname', 'A', '--lastname', 'L'],
    ['device', 'create', '--key', 'device-key'],
    ['hardware-code', 'add', '--code', 'box-0001-secret', '--label', 'box'],
  ]) {
    const result = await run(env, ...args);
    assert.equal(result.code, 2, args.join(' '));
    assert.match(result.stderr, /unknown option|required option '--(key|password|code)-file/);
  }
  const missing = await run(env, 'partner', 'create', '--name', 'acme', '--key-file', '/nonexistent/key');
  assert.deepEqual([missing.code, missing.stderr], [2, 'zentrale-admin: cannot read --key-file\n']);
  assert.equal(
    (await run(env, 'partner', 'create', '--name', 'acme', '--key-file', secretFile('k-e-y-1'))).code,
    0,
  );
});

test('a bad DATABASE_URL is not echoed with its password', async (t) => {
  for (const url of ['postgres://admin:Sup3rSecret@[bad/x', 'mysql://admin:Sup3rSecret@db/x']) {
    const result = await run({ DATA_DIR: tempDir(t), DATABASE_URL: url }, 'partner', 'list');
    assert.equal(result.code, 2);
    assert.match(result.stderr, /DATABASE_URL/);
    assert.doesNotMatch(result.stderr, /Sup3rSecret/);
  }
  const unreachable = await run(
    { DATA_DIR: tempDir(t), DATABASE_URL: 'postgres://admin:Sup3rSecret@127.0.0.1:1/x' },
    'partner',
    'list',
  );
  assert.equal(unreachable.code, 1);
  assert.doesNotMatch(unreachable.stderr, /Sup3rSecret/);
});

for (const dialect of DIALECTS) {
  describe(`set-password (${dialect})`, () => {
    test("ends the user's sessions", async (t) => {
      const env = await testEnv(t, dialect);
      const created = await run(
        env,
        'user',
        'create',
        '--username',
        'alice',
        '--password-file',
        secretFile('alice-pw'),
        '--firstname',
        'A',
        '--lastname',
        'L',
      );
      assert.equal(created.code, 0, created.stderr);
      const app = await buildApp(loadConfig(env));
      t.after(() => app.close());
      const client = new Client(app);
      await client.login('alice', 'alice-pw');
      const changed = await run(
        env,
        'user',
        'set-password',
        'alice',
        '--password-file',
        secretFile('new-pw-1'),
      );
      assert.equal(changed.code, 0, changed.stderr);
      // At once through the message bus (PostgreSQL), else at the node's next session flush.
      await app.services.sessions.flushActivity();
      assert.equal((await client.call('GET', '/api/session')).status, 'wrong-session');
    });
  });
}
