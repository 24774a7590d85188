/** `push-fcm`: the FCM service-account key pushes to Android devices are sent with. */
import type { Command } from 'commander';
import type { FcmCredentialInfo } from '../../modules/push/index.js';
import { type CliContext, isoTime, secretValue, table } from '../context.js';

export function pushFcmCommands(program: Command, ctx: CliContext): void {
  const fcm = program
    .command('push-fcm')
    .description('the FCM service-account key for pushes to Android devices (stored sealed)');

  fcm
    .command('set')
    .description('set or replace the service-account key (the JSON file from the Google Cloud console)')
    .requiredOption('--key-file <path>', 'the service-account JSON file, - for standard input')
    .action(async (opts: { keyFile: string }) => {
      const json = await secretValue('--key-file', opts.keyFile, /[\s\S]/, 'the --key-file is empty');
      await ctx.run(async (s) => {
        const set = await s.pushFcmCredentials.setCredential(json);
        return { json: set, text: `FCM key set for project ${set.project_id} (${set.client_email})` };
      });
    });

  fcm
    .command('show')
    .description('the project and account of the key (never the key)')
    .action(() =>
      ctx.run(async (s) => {
        const info: FcmCredentialInfo | undefined = await s.pushFcmCredentials.showCredential();
        return {
          json: info ?? null,
          text: info
            ? table(
                [
                  {
                    project_id: info.project_id,
                    client_email: info.client_email,
                    created: isoTime(info.created),
                  },
                ],
                ['project_id', 'client_email', 'created'],
              )
            : 'no FCM key is set',
        };
      }),
    );

  fcm
    .command('delete')
    .description('delete the key (Android pushes are then dropped)')
    .action(() =>
      ctx.run(async (s) => {
        await s.pushFcmCredentials.deleteCredential();
        return { json: { deleted: true }, text: 'FCM key deleted' };
      }),
    );
}
