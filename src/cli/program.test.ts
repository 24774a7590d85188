/**
 * The operator tool's commands in detail, on both dialects: run in this process through
 * `runAdmin` (admin.test.ts runs the real process), each over a fresh database that an app
 * built with the same environment then reads.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { cliFor } from '../../test/cli.js';
import { Client, DIALECTS, type Dialect, secretFile, tempDir, testEnv } from '../../test/helper.js';
import { buildApp } from '../app.js';
import { loadConfig } from '../platform/config.js';

const root = path.resolve(import.meta.dirname, '..', '..');

async function setup(t: TestContext, dialect: Dialect) {
  const env = await testEnv(t, dialect);
  return { env, cli: cliFor(env) };
}

/** The app as the server would run over the same configuration. */
async function appFor(t: TestContext, env: Record<string, string>) {
  const app = await buildApp(loadConfig(env));
  t.after(() => app.close());
  return app;
}

const NO_SECRETS = /hash|password|private|argon2|BEGIN/i;

for (const dialect of DIALECTS) {
  describe(`operator CLI (${dialect})`, { concurrency: true }, () => {
    test('partner: create, list, set-rights, set-key, delete; exit codes for bad and duplicate names', async (t) => {
      const { cli } = await setup(t, dialect);
      const created = await cli.run(
        'partner',
        'create',
        '--name',
        'acme',
        '--key-file',
        secretFile('acme-key'),
        '--rights',
        'phone,cdr',
      );
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.stdout, /^created partner acme \([0-9a-f-]{36}\), rights: phone,cdr\n$/);

      const list = await cli.json('partner', 'list');
      assert.equal(list.length, 1);
      assert.deepEqual(Object.keys(list[0]).sort(), ['created', 'name', 'rights', 'uuid']);
      assert.deepEqual(list[0].rights, ['phone', 'cdr']);
      assert.equal(typeof list[0].created, 'number');

      const updated = await cli.json('partner', 'set-rights', 'acme', '--rights', 'usergroup');
      assert.deepEqual(updated.rights, ['usergroup']);
      assert.deepEqual(
        (await cli.json('partner', 'set-rights', 'acme', '--rights', 'usergroup,enterprise,emergency'))
          .rights,
        ['usergroup', 'enterprise', 'emergency'],
      );
      assert.equal((await cli.json('partner', 'set-rights', 'acme', '--rights', 'none')).rights.length, 0);
      assert.equal(
        (await cli.json('partner', 'set-key', 'acme', '--key-file', secretFile('new-key'))).name,
        'acme',
      );

      await cli.fails(
        1,
        /^zentrale-admin: already-exist: partner acme exists\n$/,
        'partner',
        'create',
        '--name',
        'acme',
        '--key-file',
        secretFile('other-key'),
      );
      await cli.fails(
        2,
        /--name.*invalid/,
        'partner',
        'create',
        '--name',
        'a!',
        '--key-file',
        secretFile('acme-key'),
      );
      await cli.fails(
        2,
        /key must be 5 to 50/,
        'partner',
        'create',
        '--name',
        'beta',
        '--key-file',
        secretFile('abc'),
      );
      await cli.fails(
        2,
        /"root" is not one of/,
        'partner',
        'create',
        '--name',
        'beta',
        '--key-file',
        secretFile('abcde'),
        '--rights',
        'root',
      );
      await cli.fails(
        2,
        /required option '--key-file <file>' not specified/,
        'partner',
        'create',
        '--name',
        'beta',
      );
      await cli.fails(1, /wrong-partner: no partner "nope"/, 'partner', 'delete', 'nope');

      assert.deepEqual(await cli.json('partner', 'delete', 'acme'), { deleted: 'acme' });
      assert.deepEqual(await cli.json('partner', 'list'), []);
      assert.equal((await cli.run('partner', 'list')).stdout, '(none)\n');
    });

    test('user: create, list, show, set-password, disable/enable, delete; no secrets in the output', async (t) => {
      const { cli } = await setup(t, dialect);
      await cli.json('partner', 'create', '--name', 'acme', '--key-file', secretFile('acme-key'));
      const alice = await cli.json(
        'user',
        'create',
        '--username',
        'alice',
        '--password-file',
        secretFile('alice-pw'),
        '--firstname',
        'Alice',
        '--lastname',
        'Liddell',
        '--email',
        'alice@example.com',
        '--partner',
        'acme',
        '--language',
        'en',
      );
      assert.match(alice.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-/);
      assert.equal(alice.username, 'alice');
      assert.equal(alice.partner, 'acme');
      assert.equal(alice.language, 'en');
      assert.equal(alice.display_name, 'Alice Liddell');
      assert.equal(alice.disabled, false);
      assert.deepEqual(alice.feature.pack, ['default']);
      assert.doesNotMatch(JSON.stringify(alice), NO_SECRETS);

      const bobOk = await cli.run(
        'user',
        'create',
        '--username',
        'bob',
        '--password-file',
        secretFile('bob-password'),
        '--firstname',
        'Bob',
        '--lastname',
        'B',
      );
      assert.equal(bobOk.code, 0, bobOk.stderr);
      assert.match(bobOk.stdout, /^created user bob \([0-9a-f-]{36}\), packs: default\n$/);

      const users = await cli.json('user', 'list');
      assert.deepEqual(
        users.map((u: { username: string }) => u.username),
        ['alice', 'bob'],
      );
      assert.doesNotMatch(JSON.stringify(users), NO_SECRETS);
      assert.deepEqual(
        (await cli.json('user', 'list', '--partner', 'acme')).map((u: { uuid: string }) => u.uuid),
        [alice.uuid],
      );

      const shown = await cli.json('user', 'show', alice.uuid);
      assert.equal(shown.username, 'alice');
      assert.deepEqual(shown.feature.quota, { sip: 5, volume: 100, fax: 50, calls: 2 });
      assert.deepEqual(shown.permission, []);
      const text = await cli.run('user', 'show', 'ALICE');
      assert.match(text.stdout, /quota: sip 5, volume 100 MB, fax 50 pages\/month, calls 2/);

      assert.equal((await cli.json('user', 'disable', 'alice')).disabled, true);
      assert.equal((await cli.json('user', 'enable', 'alice')).disabled, false);
      assert.equal(
        (await cli.run('user', 'set-password', 'alice', '--password-file', secretFile('new-alice-pw'))).code,
        0,
      );

      await cli.fails(
        1,
        /^zentrale-admin: duplicate-username\n$/,
        'user',
        'create',
        '--username',
        'Alice',
        '--password-file',
        secretFile('pw-pw-pw'),
        '--firstname',
        'A',
        '--lastname',
        'B',
      );
      await cli.fails(
        1,
        /already-exist/,
        'user',
        'create',
        '--username',
        'carol',
        '--password-file',
        secretFile('pw-pw-pw'),
        '--firstname',
        'A',
        '--lastname',
        'B',
        '--email',
        'alice@example.com',
      );
      await cli.fails(
        1,
        /wrong-partner/,
        'user',
        'create',
        '--username',
        'carol',
        '--password-file',
        secretFile('pw-pw-pw'),
        '--firstname',
        'A',
        '--lastname',
        'B',
        '--partner',
        'nope',
      );
      await cli.fails(
        2,
        /--username.*invalid/,
        'user',
        'create',
        '--username',
        'c',
        '--password-file',
        secretFile('pw-pw-pw'),
        '--firstname',
        'A',
        '--lastname',
        'B',
      );
      await cli.fails(
        2,
        /--email.*invalid/,
        'user',
        'create',
        '--username',
        'carol',
        '--password-file',
        secretFile('pw-pw-pw'),
        '--firstname',
        'A',
        '--lastname',
        'B',
        '--email',
        'nope',
      );
      await cli.fails(
        2,
        /--language.*invalid/,
        'user',
        'create',
        '--username',
        'carol',
        '--password-file',
        secretFile('pw-pw-pw'),
        '--firstname',
        'A',
        '--lastname',
        'B',
        '--language',
        'fr',
      );
      await cli.fails(
        2,
        /required option '--lastname <name>'/,
        'user',
        'create',
        '--username',
        'carol',
        '--password-file',
        secretFile('pw-pw-pw'),
        '--firstname',
        'A',
      );
      await cli.fails(1, /wrong-user: no user "nobody"/, 'user', 'show', 'nobody');
      await cli.fails(1, /not-empty/, 'partner', 'delete', 'acme');

      const bobUuid = /\(([0-9a-f-]{36})\)/.exec(bobOk.stdout)?.[1];
      assert.deepEqual(await cli.json('user', 'delete', 'bob'), { deleted: bobUuid, username: 'bob' });
      assert.equal((await cli.json('user', 'list')).length, 1);
    });

    test('pack: create with quotas and flags, update, list, assign/unassign, delete', async (t) => {
      const { cli } = await setup(t, dialect);
      await cli.json(
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
      const pro = await cli.json(
        'pack',
        'create',
        '--name',
        'pro',
        '--sip',
        '10',
        '--volume',
        '1000',
        '--flag',
        'fax_noad',
        '--flag',
        'box_enable=true',
      );
      assert.deepEqual(pro.quota, { sip: 10, volume: 1000, fax: 0, calls: 0 });
      assert.equal(pro.feature.fax_noad, true);
      assert.equal(pro.feature.box_enable, true);
      assert.equal(pro.feature.dialplan_enable, false);
      assert.equal(pro.default, false);

      const updated = await cli.json(
        'pack',
        'update',
        '--name',
        'pro',
        '--fax',
        '20',
        '--flag',
        'box_enable=false',
        '--default',
      );
      assert.deepEqual(updated.quota, { sip: 10, volume: 1000, fax: 20, calls: 0 });
      assert.equal(updated.feature.box_enable, false);
      assert.equal(updated.default, true);
      assert.equal((await cli.json('pack', 'update', '--name', 'pro', '--no-default')).default, false);

      const assigned = await cli.json('pack', 'assign', 'pro', '--user', 'alice');
      assert.deepEqual(assigned.pack, ['default', 'pro']);
      assert.deepEqual(assigned.quota, { sip: 15, volume: 1100, fax: 70, calls: 2 });
      assert.equal(assigned.feature.fax_noad, true);
      assert.equal(assigned.feature.dialplan_enable, true);

      const packs = await cli.json('pack', 'list');
      assert.deepEqual(
        packs.map((p: { name: string; users: number }) => [p.name, p.users]),
        [
          ['default', 1],
          ['pro', 1],
        ],
      );
      assert.deepEqual(Object.keys(packs[0]).sort(), [
        'created',
        'default',
        'feature',
        'name',
        'quota',
        'users',
      ]);

      await cli.fails(1, /not-empty: pack pro is held by 1 user/, 'pack', 'delete', 'pro');
      assert.deepEqual((await cli.json('pack', 'unassign', 'pro', '--user', 'alice')).pack, ['default']);
      await cli.fails(1, /wrong-pack/, 'pack', 'unassign', 'pro', '--user', 'alice');
      await cli.json('pack', 'assign', 'pro', '--user', 'alice');
      assert.deepEqual(await cli.json('pack', 'delete', 'pro', '--force'), { deleted: 'pro' });

      await cli.fails(1, /already-exist/, 'pack', 'create', '--name', 'default');
      await cli.fails(1, /wrong-pack/, 'pack', 'update', '--name', 'nope', '--sip', '1');
      await cli.fails(1, /wrong-pack/, 'pack', 'assign', 'nope', '--user', 'alice');
      await cli.fails(2, /--sip.*invalid/, 'pack', 'create', '--name', 'x', '--sip', '-1');
      await cli.fails(2, /"turbo" is not one of/, 'pack', 'create', '--name', 'x', '--flag', 'turbo=true');
      await cli.fails(
        2,
        /"maybe" is not true or false/,
        'pack',
        'create',
        '--name',
        'x',
        '--flag',
        'fax_noad=maybe',
      );
      await cli.fails(2, /--name.*invalid/, 'pack', 'create', '--name', 'two words');
    });

    test('hardware-code: generate prints the code once, add, list without codes, delete', async (t) => {
      const { cli, env } = await setup(t, dialect);
      const generated = await cli.run('hardware-code', 'generate', '--label', 'batch 1');
      assert.equal(generated.code, 0, generated.stderr);
      const code = generated.stdout.split('\n')[0]!;
      assert.match(code, /^[A-Za-z0-9_-]{32}$/);
      const added = await cli.json(
        'hardware-code',
        'add',
        '--code-file',
        secretFile('box-0001-secret'),
        '--label',
        'box 1',
      );
      assert.deepEqual(Object.keys(added).sort(), ['created', 'label', 'remaining', 'uses', 'uuid']);
      assert.equal(added.remaining, 5);

      const listed = await cli.run('hardware-code', 'list', '--json');
      assert.equal(listed.code, 0);
      assert.ok(!listed.stdout.includes(code) && !listed.stdout.includes('box-0001-secret'));
      assert.deepEqual(
        JSON.parse(listed.stdout)
          .map((c: { label: string }) => c.label)
          .sort(),
        ['batch 1', 'box 1'],
      );

      // The codes work for sign-up verifications in the server.
      const app = await appFor(t, env);
      assert.equal(
        (await app.services.writer.write((w) => app.services.hardwareCodes.useHardwareCode(w, code))).label,
        'batch 1',
      );
      await app.close();

      await cli.fails(
        1,
        /already-exist/,
        'hardware-code',
        'add',
        '--code-file',
        secretFile('box-0001-secret'),
        '--label',
        'again',
      );
      await cli.fails(
        2,
        /code must be 10 to 50/,
        'hardware-code',
        'add',
        '--code-file',
        secretFile('short'),
        '--label',
        'x',
      );
      await cli.fails(2, /required option '--label <label>'/, 'hardware-code', 'generate');
      assert.deepEqual(await cli.json('hardware-code', 'delete', 'box-0001-secret'), { deleted: added.uuid });
      await cli.fails(1, /wrong-code/, 'hardware-code', 'delete', added.uuid);
      assert.equal((await cli.json('hardware-code', 'list')).length, 1);
    });

    test('device: create, list, set-key, assign/unassign, delete; the server verifies the key', async (t) => {
      const { cli, env } = await setup(t, dialect);
      await cli.json(
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
      const uuid = 'c232ab00-9414-11ec-b3c8-9f6bdeced846';
      const device = await cli.json(
        'device',
        'create',
        '--uuid',
        uuid.toUpperCase(),
        '--key-file',
        secretFile('device-key'),
        '--owner',
        'alice',
        '--description',
        'hall',
      );
      assert.deepEqual(Object.keys(device).sort(), [
        'created',
        'description',
        'license',
        'owner',
        'owner_username',
        'uuid',
      ]);
      assert.equal(device.uuid, uuid);
      assert.equal(device.owner_username, 'alice');
      const generated = await cli.json('device', 'create', '--key-file', secretFile('other-key'));
      assert.match(generated.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-1/);
      assert.equal(generated.owner, null);

      assert.deepEqual(
        (await cli.json('device', 'list', '--owner', 'alice')).map((d: { uuid: string }) => d.uuid),
        [uuid],
      );
      assert.equal((await cli.json('device', 'list')).length, 2);
      assert.equal((await cli.json('device', 'unassign', uuid)).owner, null);
      assert.equal(
        (await cli.json('device', 'assign', generated.uuid, '--owner', 'alice')).owner_username,
        'alice',
      );
      assert.equal(
        (await cli.run('device', 'set-key', uuid, '--key-file', secretFile('new-device-key'))).code,
        0,
      );

      const app = await appFor(t, env);
      assert.equal((await app.services.devices.verifyDevice(uuid, 'new-device-key'))?.uuid, uuid);
      assert.equal(await app.services.devices.verifyDevice(uuid, 'device-key'), undefined);
      await app.close();

      await cli.fails(
        1,
        /already-exist/,
        'device',
        'create',
        '--uuid',
        uuid,
        '--key-file',
        secretFile('device-key'),
      );
      await cli.fails(
        2,
        /--uuid.*invalid.*version 1 UUID/,
        'device',
        'create',
        '--uuid',
        '6ba7b810-9dad-41d1-80b4-00c04fd430c8',
        '--key-file',
        secretFile('device-key'),
      );
      await cli.fails(2, /key must be 5 to 50/, 'device', 'create', '--key-file', secretFile('abc'));
      await cli.fails(1, /wrong-user/, 'device', 'assign', uuid, '--owner', 'nobody');
      assert.deepEqual(await cli.json('device', 'delete', uuid), { deleted: uuid });
      await cli.fails(1, /wrong-device/, 'device', 'delete', uuid);
    });

    test('permission: grant, list, revoke; bad permission names', async (t) => {
      const { cli } = await setup(t, dialect);
      const alice = await cli.json(
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
      assert.deepEqual(
        (await cli.json('permission', 'grant', '--user', 'alice', '--permission', 'jeye')).permission,
        ['jeye'],
      );
      assert.deepEqual(
        (await cli.json('permission', 'grant', '--user', alice.uuid, '--permission', 'mwi')).permission,
        ['jeye', 'mwi'],
      );
      assert.deepEqual(await cli.json('permission', 'list'), [
        { user: alice.uuid, username: 'alice', permission: 'jeye' },
        { user: alice.uuid, username: 'alice', permission: 'mwi' },
      ]);
      assert.deepEqual(
        (await cli.json('permission', 'revoke', '--user', 'alice', '--permission', 'jeye')).permission,
        ['mwi'],
      );
      await cli.fails(
        1,
        /wrong-permission/,
        'permission',
        'revoke',
        '--user',
        'alice',
        '--permission',
        'jeye',
      );
      await cli.fails(
        2,
        /--permission.*invalid.*one of jeye, statistics, usage, mwi, idcardcheck/,
        'permission',
        'grant',
        '--user',
        'alice',
        '--permission',
        'root',
      );
      assert.deepEqual((await cli.json('user', 'show', 'alice')).permission, ['mwi']);
    });

    test('phone: add, list, assign, unassign, lock/unlock, delete', async (t) => {
      const { cli } = await setup(t, dialect);
      await cli.json('partner', 'create', '--name', 'acme', '--key-file', secretFile('acme-key'));
      await cli.json(
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
        '--partner',
        'acme',
      );
      const added = await cli.json('phone', 'add', '+4930123456', '--partner', 'acme');
      assert.deepEqual(Object.keys(added).sort(), [
        'created',
        'locked',
        'number',
        'partner',
        'settings',
        'user',
        'username',
      ]);
      assert.equal(added.partner, 'acme');
      assert.equal(added.locked, true);
      assert.equal(
        (await cli.json('phone', 'add', '+4930000001', '--user', 'alice', '--unlocked')).locked,
        false,
      );

      const assigned = await cli.json('phone', 'assign', '+4930123456', '--user', 'alice');
      assert.equal(assigned.username, 'alice');
      assert.equal(assigned.partner, 'acme');
      assert.deepEqual(
        (await cli.json('phone', 'list', '--user', 'alice')).map((n: { number: string }) => n.number),
        ['+4930000001', '+4930123456'],
      );
      assert.equal((await cli.json('phone', 'list', '--partner', 'acme')).length, 1);
      assert.equal((await cli.json('phone', 'unlock', '+4930123456')).locked, false);
      assert.equal((await cli.json('phone', 'lock', '+4930123456')).locked, true);
      const unassigned = await cli.json('phone', 'unassign', '+4930123456');
      assert.equal(unassigned.user, null);
      assert.equal(unassigned.partner, 'acme');
      assert.equal((await cli.json('phone', 'unassign', '+4930123456', '--partner')).partner, null);
      const listed = await cli.run('phone', 'list');
      assert.match(listed.stdout, /^number +user +partner +state +created\n\+4930000001 +alice +- +unlocked/);

      await cli.fails(1, /phone-duplicate/, 'phone', 'add', '+4930123456');
      await cli.fails(2, /invalid.*\+ and 3 to 20 digits/, 'phone', 'add', '030123456');
      await cli.fails(2, /name --user and\/or --partner/, 'phone', 'assign', '+4930123456');
      await cli.fails(1, /wrong-phone/, 'phone', 'lock', '+4930999999');
      assert.deepEqual(await cli.json('phone', 'delete', '+4930123456'), { deleted: '+4930123456' });
      assert.equal((await cli.json('phone', 'list')).length, 1);
    });

    test('push-app: add with a .p8 key file, list without keys, delete', async (t) => {
      const { cli } = await setup(t, dialect);
      const keyFile = path.join(tempDir(t), 'AuthKey.p8');
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
      const id = 'ABCDE12345.com.example.app';
      const added = await cli.json(
        'push-app',
        'add',
        '--id',
        id,
        '--team',
        'ABCDE12345',
        '--key-id',
        'KEY1234567',
        '--key-file',
        keyFile,
      );
      assert.deepEqual(added, {
        application_id: id,
        team_id: 'ABCDE12345',
        key_id: 'KEY1234567',
        created: added.created,
      });
      const listed = await cli.run('push-app', 'list', '--json');
      assert.doesNotMatch(listed.stdout, NO_SECRETS);
      assert.deepEqual(JSON.parse(listed.stdout), [added]);

      await cli.fails(
        1,
        /already-exist/,
        'push-app',
        'add',
        '--id',
        id,
        '--team',
        'ABCDE12345',
        '--key-id',
        'KEY1234567',
        '--key-file',
        keyFile,
      );
      await cli.fails(
        2,
        /cannot read --key-file/,
        'push-app',
        'add',
        '--id',
        'ABCDE12345.com.example.other',
        '--team',
        'ABCDE12345',
        '--key-id',
        'KEY1234567',
        '--key-file',
        path.join(root, 'nope.p8'),
      );
      await cli.fails(
        2,
        /bad private key/,
        'push-app',
        'add',
        '--id',
        'ABCDE12345.com.example.other',
        '--team',
        'ABCDE12345',
        '--key-id',
        'KEY1234567',
        '--key-file',
        path.join(root, 'package.json'),
      );
      await cli.fails(
        2,
        /--id.*invalid/,
        'push-app',
        'add',
        '--id',
        'bad',
        '--team',
        'ABCDE12345',
        '--key-id',
        'KEY1234567',
        '--key-file',
        keyFile,
      );
      assert.deepEqual(await cli.json('push-app', 'delete', id), { deleted: id });
      await cli.fails(1, /unknown-appid/, 'push-app', 'delete', id);
    });

    test('a partner and a user made by the CLI log in through the API; a disabled user cannot', async (t) => {
      const { cli, env } = await setup(t, dialect);
      await cli.json(
        'partner',
        'create',
        '--name',
        'acme',
        '--key-file',
        secretFile('acme-key'),
        '--rights',
        'phone',
      );
      const alice = await cli.json(
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
        '--partner',
        'acme',
      );
      await cli.json(
        'user',
        'create',
        '--username',
        'bob',
        '--password-file',
        secretFile('bob-pw1'),
        '--firstname',
        'B',
        '--lastname',
        'B',
      );
      await cli.json('user', 'disable', 'bob');

      const app = await appFor(t, env);
      const user = new Client(app);
      await user.open();
      assert.deepEqual(await user.call('POST', '/api/session', { username: 'alice', password: 'alice-pw' }), {
        status: 'ok',
        partner: 'acme',
      });
      const partner = new Client(app);
      await partner.open();
      assert.equal(
        (await partner.call('POST', '/api/session', { partner: 'acme', key: 'acme-key' })).status,
        'ok',
      );
      const proxy = new Client(app);
      await proxy.open();
      assert.equal(
        (await proxy.call('POST', '/api/session', { partner: 'acme', key: 'acme-key', user: alice.uuid }))
          .status,
        'ok',
      );
      const disabled = new Client(app);
      await disabled.open();
      assert.equal(
        (await disabled.call('POST', '/api/session', { username: 'bob', password: 'bob-pw1' })).status,
        'wrong-credentials',
      );
      assert.deepEqual((await app.services.features.quotaOf(alice.uuid)).pack, ['default']);
    });
  });
}

test('--help on every level; unknown and incomplete commands and bad configuration exit 2', async (t) => {
  const { cli } = await setup(t, 'sqlite');
  for (const args of [[], ['partner'], ['partner', 'create'], ['pack', 'assign'], ['push-app', 'add']]) {
    const help = await cli.run(...args, '--help');
    assert.equal(help.code, 0, args.join(' '));
    assert.match(help.stdout, /^Usage: zentrale-admin/);
  }
  await cli.fails(2, /unknown command 'nonsense'/, 'nonsense');
  await cli.fails(2, /Usage: zentrale-admin partner/, 'partner');
  await cli.fails(2, /unknown option '--bogus'/, 'partner', 'list', '--bogus');
  await cli.fails(2, /too many arguments/, 'phone', 'lock', '+4930123456', 'extra');
  const badConfig = await cliFor({ DATA_DIR: tempDir(t), DATABASE_URL: 'mysql://localhost/x' }).run(
    'partner',
    'list',
  );
  assert.equal(badConfig.code, 2);
  assert.match(
    badConfig.stderr,
    /^zentrale-admin: configuration: DATABASE_URL must use postgres: or postgresql:/,
  );
});
