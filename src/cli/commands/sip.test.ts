/**
 * `zentrale-admin sip` on both dialects, run in this process through `runAdmin` over a fresh
 * database that an app built with the same environment made the accounts in.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cliWithUsers } from '../../../test/cli.js';
import { Client, DIALECTS } from '../../../test/helper.js';

for (const dialect of DIALECTS) {
  describe(`operator CLI: sip (${dialect})`, () => {
    test('list (all, --user), set-domain; never a password; exit codes for unknown accounts and domains', async (t) => {
      const { app, cli, users: made } = await cliWithUsers(t, dialect, ['carol', 'dave']);
      const { sipDomainCurrent: current, sipDomainLegacy: legacy } = app.config;
      for (const user of made)
        await app.services.sip.createAccount(user.uuid, {
          password: 'sip-secret',
          description: user.username,
        });
      const [carol] = made;
      const client = new Client(app);
      await client.login('carol', 'secret-pw');

      const all = await cli.run('sip', 'list', '--json');
      assert.equal(all.code, 0, all.stderr);
      assert.doesNotMatch(all.stdout, /sip-secret|password|ha1/);
      assert.deepEqual(
        JSON.parse(all.stdout).map((a: Record<string, unknown>) => [a.user, a.owner_username, a.domain]),
        [
          ['carol_01', 'carol', current],
          ['dave_01', 'dave', current],
        ],
      );
      const text = await cli.run('sip', 'list', '--user', 'carol');
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /carol_01/);
      assert.doesNotMatch(text.stdout, /dave_01|sip-secret/);

      const moved = await cli.run('sip', 'set-domain', 'carol_01', legacy, '--json');
      assert.equal(moved.code, 0, moved.stderr);
      assert.deepEqual(
        { user: JSON.parse(moved.stdout).user, domain: JSON.parse(moved.stdout).domain },
        { user: 'carol_01', domain: legacy },
      );
      const seen = (await client.call('GET', '/api/sip')).sip as Record<string, { domain: string }>;
      assert.equal(seen.carol_01?.domain, legacy);

      for (const [args, code, message] of [
        [['set-domain', 'nobody_01', legacy], 1, /wrong-sip/],
        [['set-domain', 'carol_01', 'sip.example.com'], 1, /wrong-domain/],
        [['set-domain', 'Carol', legacy], 2, /a SIP user name/],
        [['list', '--user', 'nobody'], 1, /./],
      ] as const)
        await cli.fails(code, message, 'sip', ...args);
      assert.equal(carol?.username, 'carol');
    });
  });
}
