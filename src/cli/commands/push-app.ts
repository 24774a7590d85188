/** `push-app`: iOS push application ids with their APNs credentials (spec "Push registration"). */
import fs from 'node:fs/promises';
import type { Command } from 'commander';
import { APPLE_ID, APPLICATION_ID, type PushApplication } from '../../modules/push/index.js';
import { type CliContext, isoTime, matching, table, UsageError } from '../context.js';

export function pushAppCommands(program: Command, ctx: CliContext): void {
  const app = program
    .command('push-app')
    .description('iOS push application ids and their APNs token credentials');

  app
    .command('add')
    .description('register an application id with its APNs key')
    .requiredOption(
      '--id <application-id>',
      'like ABCDE12345.com.example.app',
      matching(APPLICATION_ID, 'like ABCDE12345.com.example.app'),
    )
    .requiredOption(
      '--team <team-id>',
      'Apple team id, 10 letters or digits',
      matching(APPLE_ID, '10 letters or digits'),
    )
    .requiredOption(
      '--key-id <key-id>',
      'APNs key id, 10 letters or digits',
      matching(APPLE_ID, '10 letters or digits'),
    )
    .requiredOption('--key-file <path>', 'the APNs signing key (.p8 file)')
    .action(async (opts: { id: string; team: string; keyId: string; keyFile: string }) => {
      let privateKey: string;
      try {
        privateKey = await fs.readFile(opts.keyFile, 'utf8');
      } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
        throw new UsageError(`cannot read --key-file ${opts.keyFile}: ${reason}`);
      }
      await ctx.run(async (s) => {
        const added = await s.pushApplications.addApplication({
          applicationId: opts.id,
          teamId: opts.team,
          keyId: opts.keyId,
          privateKey,
        });
        return { json: added, text: `registered push application ${added.application_id}` };
      });
    });

  app
    .command('list')
    .description('list application ids (never the keys)')
    .action(() =>
      ctx.run(async (s) => {
        const apps: PushApplication[] = await s.pushApplications.listApplications();
        return {
          json: apps,
          text: table(
            apps.map((a) => ({
              application_id: a.application_id,
              team: a.team_id,
              key_id: a.key_id,
              created: isoTime(a.created),
            })),
            ['application_id', 'team', 'key_id', 'created'],
          ),
        };
      }),
    );

  app
    .command('delete')
    .description('delete an application id')
    .argument('<application-id>', 'application id')
    .action((id: string) =>
      ctx.run(async (s) => {
        await s.pushApplications.deleteApplication(id);
        return { json: { deleted: id }, text: `deleted push application ${id}` };
      }),
    );
}
