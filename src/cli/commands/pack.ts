/** `pack`: feature packs, their quotas and flags, and who holds them (decisions.md "Feature packs"). */
import { type Command, InvalidArgumentError } from 'commander';
import {
  FEATURE_FLAGS,
  type FeatureFlag,
  type FeatureFlags,
  type FeaturePack,
  PACK_NAME,
  type PackChanges,
} from '../../modules/feature/index.js';
import { type CliContext, isoTime, matching, resolveUser, table, wholeNumber } from '../context.js';

interface PackOptions {
  sip?: number;
  volume?: number;
  fax?: number;
  calls?: number;
  flag?: Partial<FeatureFlags>;
  default?: boolean;
}

const TRUE = ['true', 'on', 'yes', '1'];
const FALSE = ['false', 'off', 'no', '0'];

/** `--flag dialplan_enable=true` (or just `--flag dialplan_enable`), repeatable. */
function flag(value: string, previous: Partial<FeatureFlags> | undefined): Partial<FeatureFlags> {
  const [name = '', setting = 'true'] = value.split('=', 2);
  if (!(FEATURE_FLAGS as readonly string[]).includes(name))
    throw new InvalidArgumentError(`"${name}" is not one of ${FEATURE_FLAGS.join(', ')}`);
  if (!TRUE.includes(setting) && !FALSE.includes(setting))
    throw new InvalidArgumentError(`"${setting}" is not true or false`);
  return { ...previous, [name as FeatureFlag]: TRUE.includes(setting) };
}

function changes(opts: PackOptions): PackChanges {
  return {
    quota: { sip: opts.sip, volume: opts.volume, fax: opts.fax, calls: opts.calls },
    feature: opts.flag,
    isDefault: opts.default,
  };
}

function packLine(pack: FeaturePack): string {
  const q = pack.quota;
  const flags = FEATURE_FLAGS.filter((f) => pack.feature[f]);
  return (
    `pack ${pack.name}${pack.default ? ' (default)' : ''}: sip ${q.sip}, volume ${q.volume} MB, ` +
    `fax ${q.fax} pages/month, calls ${q.calls}; features: ${flags.join(', ') || 'none'}`
  );
}

function withPackOptions(command: Command): Command {
  return command
    .requiredOption(
      '--name <name>',
      'pack name: letters, digits, _ . -',
      matching(PACK_NAME, 'letters, digits, _ . - (1 to 50)'),
    )
    .option('--sip <n>', 'SIP accounts', wholeNumber)
    .option('--volume <mb>', 'storage volume in MB', wholeNumber)
    .option('--fax <pages>', 'fax pages a month', wholeNumber)
    .option('--calls <n>', 'concurrent calls', wholeNumber)
    .option('--flag <flag=bool>', `feature flag, repeatable: ${FEATURE_FLAGS.join(', ')}`, flag);
}

export function packCommands(program: Command, ctx: CliContext): void {
  const pack = program
    .command('pack')
    .description('feature packs: quotas and feature flags; a user has the sums over their packs');

  withPackOptions(pack.command('create').description('create a pack (quotas left out are 0, flags off)'))
    .option('--default', 'give it to every new user')
    .action((opts: PackOptions & { name: string }) =>
      ctx.run(async (s) => {
        const created = await s.features.createPack(opts.name, changes(opts));
        return { json: created, text: `created ${packLine(created)}` };
      }),
    );

  withPackOptions(pack.command('update').description('change some quotas and flags of a pack'))
    .option('--default', 'give it to every new user from now on')
    .option('--no-default', 'stop giving it to new users')
    .action((opts: PackOptions & { name: string }) =>
      ctx.run(async (s) => {
        const updated = await s.features.updatePack(opts.name, changes(opts));
        return { json: updated, text: `updated ${packLine(updated)}` };
      }),
    );

  pack
    .command('list')
    .description('list packs with the number of users holding each')
    .action(() =>
      ctx.run(async (s) => {
        const packs = await s.features.listPacks();
        return {
          json: packs,
          text: table(
            packs.map((p) => ({
              name: p.name,
              default: p.default ? 'yes' : 'no',
              sip: p.quota.sip,
              volume: p.quota.volume,
              fax: p.quota.fax,
              calls: p.quota.calls,
              users: p.users,
              features: FEATURE_FLAGS.filter((f) => p.feature[f]).join(',') || 'none',
              created: isoTime(p.created),
            })),
            ['name', 'default', 'sip', 'volume', 'fax', 'calls', 'users', 'features', 'created'],
          ),
        };
      }),
    );

  pack
    .command('delete')
    .description('delete a pack')
    .argument('<name>', 'pack name')
    .option('--force', 'also when users hold it (they lose it)')
    .action((name: string, opts: { force?: boolean }) =>
      ctx.run(async (s) => {
        await s.features.deletePack(name, { force: opts.force === true });
        return { json: { deleted: name }, text: `deleted pack ${name}` };
      }),
    );

  for (const verb of ['assign', 'unassign'] as const) {
    pack
      .command(verb)
      .description(verb === 'assign' ? 'give a user a pack' : 'take a pack from a user')
      .argument('<name>', 'pack name')
      .requiredOption('--user <user>', 'username or UUID')
      .action((name: string, opts: { user: string }) =>
        ctx.run(async (s) => {
          const user = await resolveUser(s, opts.user);
          if (verb === 'assign') await s.features.assignPack(user.uuid, name);
          else await s.features.unassignPack(user.uuid, name);
          const features = await s.features.quotaOf(user.uuid);
          return {
            json: { user: user.uuid, username: user.username, ...features },
            text: `${verb}ed pack ${name} ${verb === 'assign' ? 'to' : 'from'} ${user.username}; packs now: ${features.pack.join(', ') || 'none'}`,
          };
        }),
      );
  }
}
