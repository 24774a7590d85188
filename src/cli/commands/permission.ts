/** `permission`: internal permissions for the internal API (spec "Internal API"). */
import type { Command } from 'commander';
import { INTERNAL_PERMISSIONS, type InternalPermission } from '../../modules/user/index.js';
import { ApiError } from '../../platform/errors.js';
import { type CliContext, matching, resolveUser, table, usernames } from '../context.js';

const PERMISSION = new RegExp(`^(${INTERNAL_PERMISSIONS.join('|')})$`);

export function permissionCommands(program: Command, ctx: CliContext): void {
  const permission = program
    .command('permission')
    .description(`internal permissions: ${INTERNAL_PERMISSIONS.join(', ')}`);

  for (const verb of ['grant', 'revoke'] as const) {
    permission
      .command(verb)
      .description(verb === 'grant' ? 'grant a user an internal permission' : 'revoke an internal permission')
      .requiredOption('--user <user>', 'username or UUID')
      .requiredOption(
        '--permission <name>',
        INTERNAL_PERMISSIONS.join(', '),
        matching(PERMISSION, `one of ${INTERNAL_PERMISSIONS.join(', ')}`),
      )
      .action((opts: { user: string; permission: InternalPermission }) =>
        ctx.run(async (s) => {
          const user = await resolveUser(s, opts.user);
          if (verb === 'grant') await s.users.grantPermission(user.uuid, opts.permission);
          else if (!(await s.users.revokePermission(user.uuid, opts.permission)))
            throw new ApiError('wrong-permission', `${user.username} does not have ${opts.permission}`);
          const held = (await s.users.listPermissions(user.uuid)).map((p) => p.permission);
          return {
            json: { user: user.uuid, username: user.username, permission: held },
            text: `${verb === 'grant' ? 'granted' : 'revoked'} ${opts.permission} ${verb === 'grant' ? 'to' : 'from'} ${user.username}; now: ${held.join(', ') || 'none'}`,
          };
        }),
      );
  }

  permission
    .command('list')
    .description('list granted permissions')
    .option('--user <user>', 'only this user (username or UUID)')
    .action((opts: { user?: string }) =>
      ctx.run(async (s) => {
        const user = opts.user === undefined ? undefined : await resolveUser(s, opts.user);
        const rows = await s.users.listPermissions(user?.uuid);
        const names = await usernames(
          s,
          rows.map((r) => r.user_uuid),
        );
        const list = rows.map((r) => ({
          user: r.user_uuid,
          username: names.get(r.user_uuid) ?? null,
          permission: r.permission,
        }));
        return { json: list, text: table(list, ['username', 'user', 'permission']) };
      }),
    );
}
