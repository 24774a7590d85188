/**
 * `usage`: the per-user usage counters (docs/decisions.md "Storage volume"): the bytes a user's
 * objects take and their number per type, recomputed from the object rows.
 */
import type { Command } from 'commander';
import { type CliContext, table, usernames } from '../context.js';

export function usageCommands(program: Command, ctx: CliContext): void {
  const usage = program
    .command('usage')
    .description('per-user usage counters (storage volume, objects per type)');

  usage
    .command('recount')
    .description('recompute every counter from the objects, report the ones that differed and set them right')
    .option('--dry-run', 'only report the differences')
    .action((opts: { dryRun?: boolean }) =>
      ctx.run(async (s) => {
        const fix = opts.dryRun !== true;
        const differences = await s.store.recountUsage(fix);
        const names = await usernames(
          s,
          differences.map((d) => d.user),
        );
        const rows = differences.map((d) => ({ ...d, username: names.get(d.user) ?? null }));
        const verb = fix ? 'corrected' : 'differ';
        return {
          json: { fixed: fix, differences: rows },
          text:
            rows.length === 0
              ? 'all counters equal the sums'
              : `${rows.length} counter(s) ${verb}:\n${table(rows, ['username', 'user', 'counter', 'counted', 'summed'])}`,
        };
      }),
    );
}
