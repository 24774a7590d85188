/**
 * The operator tool as the operator runs it: the real CLI as a child process over a fresh
 * database of each dialect; then a server app built with the same environment logs in the
 * partner and the user it made. program.test.ts covers every command in detail in process.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Client, DIALECTS, secretFile, tempDir, testEnv, until } from '../../test/helper.js';
import { buildApp } from '../app.js';
import { loadConfig } from '../platform/config.js';

const root = path.resolve(import.meta.dirname, '..', '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function spawnRun(args: string[], env: Record<string, string>, input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      // No DATABASE_URL unless the test sets one: SQLite under DATA_DIR.
      env: { ...process.env, DATABASE_URL: '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

function cliFor(env: Record<string, string>) {
  const run = (args: string[], input?: string) =>
    spawnRun(['--import', 'tsx', 'src/cli/admin.ts', ...args], env, input);
  return {
    run,
    // biome-ignore lint/suspicious/noExplicitAny: parsed output, checked by the assertions.
    async json(...args: string[]): Promise<any> {
      const result = await run([...args, '--json']);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return JSON.parse(result.stdout);
    },
  };
}

const NO_SECRETS = /hash|password|private|argon2|BEGIN/i;

for (const dialect of DIALECTS) {
  describe(`zentrale-admin process (${dialect})`, () => {
    test('every noun, --json output, exit codes, and the server logs in what the CLI made', async (t) => {
      const env = await testEnv(t, dialect);
      const cli = cliFor(env);

      const partner = await cli.json(
        'partner',
        'create',
        '--name',
        'acme',
        '--key-file',
        secretFile('acme-key'),
        '--rights',
        'phone',
      );
      assert.deepEqual(Object.keys(partner).sort(), ['created', 'name', 'rights', 'uuid']);
      // The password comes from standard input, out of the process list.
      const created = await cli.run(
        [
          'user',
          'create',
          '--username',
          'alice',
          '--password-file',
          '-',
          '--firstname',
          'Alice',
          '--lastname',
          'L',
        ].concat(['--partner', 'acme', '--json']),
        'alice-pw\n',
      );
      assert.equal(created.code, 0, created.stderr);
      const alice = JSON.parse(created.stdout);
      assert.equal(alice.partner, 'acme');
      assert.deepEqual(alice.feature.pack, ['default']);

      await cli.json('pack', 'create', '--name', 'pro', '--sip', '10', '--flag', 'fax_noad=true');
      assert.deepEqual((await cli.json('pack', 'assign', 'pro', '--user', 'alice')).quota, {
        sip: 15,
        volume: 100,
        fax: 50,
        calls: 2,
      });
      const code = await cli.run(['hardware-code', 'generate', '--label', 'box 1']);
      assert.equal(code.code, 0, code.stderr);
      assert.match(
        code.stdout,
        /^[A-Za-z0-9_-]{32}\n\(hardware code [0-9a-f-]{36}, box 1; shown only now\)\n$/,
      );
      const device = await cli.json(
        'device',
        'create',
        '--key-file',
        secretFile('device-key'),
        '--owner',
        alice.uuid,
      );
      await cli.json('permission', 'grant', '--user', 'alice', '--permission', 'statistics');
      await cli.json('phone', 'add', '+4930123456', '--user', 'alice', '--partner', 'acme', '--unlocked');
      const keyFile = path.join(tempDir(t), 'AuthKey.p8');
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
      const pushArgs = [
        '--id',
        'ABCDE12345.com.example.app',
        '--team',
        'ABCDE12345',
        '--key-id',
        'KEY1234567',
      ];
      await cli.json('push-app', 'add', ...pushArgs, '--key-file', keyFile);

      const shown = await cli.json('user', 'show', 'alice');
      assert.deepEqual(shown.feature.pack, ['default', 'pro']);
      assert.deepEqual(shown.permission, ['statistics']);
      assert.deepEqual(shown.phone, [{ number: '+4930123456', locked: false }]);
      assert.deepEqual(shown.device, [device.uuid]);
      const lists = await Promise.all(
        ['partner', 'user', 'pack', 'hardware-code', 'device', 'permission', 'phone', 'push-app'].map(
          (noun) => cli.run([noun, 'list', '--json']),
        ),
      );
      for (const list of lists) {
        assert.equal(list.code, 0, list.stderr);
        assert.ok(Array.isArray(JSON.parse(list.stdout)));
        assert.doesNotMatch(list.stdout, NO_SECRETS);
      }

      const duplicate = await cli.run([
        'partner',
        'create',
        '--name',
        'acme',
        '--key-file',
        secretFile('acme-key'),
      ]);
      assert.equal(duplicate.code, 1);
      assert.equal(duplicate.stderr, 'zentrale-admin: already-exist: partner acme exists\n');
      assert.equal(duplicate.stdout, '');
      const bad = await cli.run(['phone', 'add', '0301234']);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /^error: command-argument value '0301234' is invalid for argument 'number'/);

      const server = await buildApp(loadConfig(env));
      t.after(() => server.close());
      const user = new Client(server);
      await user.open();
      assert.deepEqual(await user.call('POST', '/api/session', { username: 'alice', password: 'alice-pw' }), {
        status: 'ok',
        partner: 'acme',
      });
      const reseller = new Client(server);
      await reseller.open();
      assert.deepEqual(await reseller.call('POST', '/api/session', { partner: 'acme', key: 'acme-key' }), {
        status: 'ok',
      });
      assert.equal(
        (await server.services.devices.verifyDevice(device.uuid, 'device-key'))?.owner,
        alice.uuid,
      );
      assert.equal((await server.services.features.quotaOf(alice.uuid)).feature.fax_noad, true);

      // Disabling a user ends their sessions on the running node: with PostgreSQL through the
      // message bus at once, with SQLite (no bus between processes) at the node's next flush.
      const disabled = await cli.run(['user', 'disable', 'alice']);
      assert.equal(disabled.code, 0, disabled.stderr);
      if (dialect === 'sqlite') await server.services.sessions.flushActivity();
      await until(
        async () => (await user.call('GET', '/api/session')).status === 'wrong-session',
        "the disabled user's session ends",
      );
      assert.equal((await reseller.call('GET', '/api/session')).status, 'ok');
      const again = new Client(server);
      await again.open();
      assert.equal(
        (await again.call('POST', '/api/session', { username: 'alice', password: 'alice-pw' })).status,
        'wrong-credentials',
      );
    });
  });
}

test('the zentrale-admin bin and --help', async (t) => {
  const env = await testEnv(t);
  const help = await spawnRun(['bin/zentrale-admin.js', 'pack', 'create', '--help'], env);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage: zentrale-admin pack create \[options\]/);
  assert.match(help.stdout, /--flag <flag=bool>/);
  const created = await spawnRun(
    ['bin/zentrale-admin.js', 'partner', 'create', '--name', 'acme', '--key-file', secretFile('acme-key')],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const list = await spawnRun(['bin/zentrale-admin.js', 'partner', 'list'], env);
  assert.match(list.stdout, /^name +uuid +rights +created\nacme /);
  const missing = await spawnRun(['bin/zentrale-admin.js', 'user'], env);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /Usage: zentrale-admin user/);
});
