/** `sip`: SIP accounts of users (spec "SIP accounts"): list them, move one to the other domain. */
import type { Command } from 'commander';
import type { Services } from '../../app.js';
import type { SipAccountRecord } from '../../modules/sip/index.js';
import { type CliContext, isoTime, matching, resolveUser, table, usernames } from '../context.js';

const SIPUSER = /^[a-z0-9]{2,20}_[0-9]{2}$/;

async function accountsJson(s: Services, accounts: SipAccountRecord[]) {
  const names = await usernames(
    s,
    accounts.map((a) => a.owner),
  );
  // Never the password: the operator has no need of it, and output ends up in logs.
  return accounts.map((a) => ({ ...a, owner_username: names.get(a.owner) ?? null }));
}

export function sipCommands(program: Command, ctx: CliContext): void {
  const sip = program.command('sip').description("SIP accounts: list, change an account's domain");

  sip
    .command('list')
    .description('list SIP accounts (never their passwords)')
    .option('--user <user>', "only this user's accounts: username or UUID")
    .action((opts: { user?: string }) =>
      ctx.run(async (s) => {
        const user = opts.user === undefined ? undefined : await resolveUser(s, opts.user);
        const accounts = await accountsJson(s, await s.sip.listAllAccounts(user?.uuid));
        return {
          json: accounts,
          text: table(
            accounts.map((a) => ({
              user: a.user,
              owner: a.owner_username,
              domain: a.domain,
              created: isoTime(a.created),
              description: a.description,
            })),
            ['user', 'owner', 'domain', 'created', 'description'],
          ),
        };
      }),
    );

  sip
    .command('set-domain')
    .description('move an account to one of the two SIP domains (its phone must register again)')
    .argument(
      '<sip-user>',
      'SIP user name, e.g. alice_01',
      matching(SIPUSER, 'a SIP user name such as alice_01'),
    )
    .argument('<domain>', 'SIP_DOMAIN_CURRENT or SIP_DOMAIN_LEGACY of the configuration')
    .action((username: string, domain: string) =>
      ctx.run(async (s) => {
        const [shown] = await accountsJson(s, [await s.sip.setDomain(username, domain)]);
        return { json: shown, text: `${username} now in domain ${domain}` };
      }),
    );
}
