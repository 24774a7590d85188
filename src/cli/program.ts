/**
 * The operator's command-line tool (decisions.md "Deployment contract"): `zentrale-admin <noun>
 * <verb> [args] [--json]`. It reads the server's configuration (DATA_DIR, DATABASE_URL), opens
 * and migrates the same storage, works through the same services and closes the database.
 *
 * Exit codes: 0 done; 1 the operation failed (unknown or duplicate names and other statuses,
 * printed as `<status>: <message>`); 2 bad arguments or configuration.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../platform/config.js';
import { ApiError } from '../platform/errors.js';
import { deviceCommands } from './commands/device.js';
import { hardwareCodeCommands } from './commands/hardware-code.js';
import { packCommands } from './commands/pack.js';
import { partnerCommands } from './commands/partner.js';
import { permissionCommands } from './commands/permission.js';
import { phoneCommands } from './commands/phone.js';
import { pushAppCommands } from './commands/push-app.js';
import { pushFcmCommands } from './commands/push-fcm.js';
import { sipCommands } from './commands/sip.js';
import { usageCommands } from './commands/usage.js';
import { userCommands } from './commands/user.js';
import { CliContext, redactUrls, UsageError } from './context.js';

export interface AdminIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processIo: AdminIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

export function buildProgram(ctx: CliContext, io: AdminIo): Command {
  const program = new Command('zentrale-admin')
    .description(
      'Operator tool of Zentrale: partners, users, feature packs, hardware codes, devices, permissions, phone numbers, push application ids, SIP accounts, usage counters',
    )
    .option('--json', 'print JSON (objects and arrays) instead of text')
    .addHelpText(
      'after',
      '\nUses the server configuration: DATA_DIR (SQLite) or DATABASE_URL (PostgreSQL).\n' +
        'Exit codes: 0 ok, 1 failed (e.g. unknown or duplicate name), 2 bad arguments.\n' +
        'Secrets are read from files (--key-file, --password-file, --code-file), "-" meaning\n' +
        'standard input, never from arguments (the shell history and the process list show those).',
    )
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(add --help for usage)')
    .hook('preAction', (_root, action) => {
      ctx.json = action.optsWithGlobals<{ json?: boolean }>().json === true;
    });
  partnerCommands(program, ctx);
  userCommands(program, ctx);
  packCommands(program, ctx);
  hardwareCodeCommands(program, ctx);
  deviceCommands(program, ctx);
  permissionCommands(program, ctx);
  phoneCommands(program, ctx);
  pushAppCommands(program, ctx);
  pushFcmCommands(program, ctx);
  sipCommands(program, ctx);
  usageCommands(program, ctx);
  return program;
}

/** Statuses that say the arguments were wrong rather than the operation. */
const USAGE_STATUSES = new Set(['wrong-syntax', 'missing-element', 'invalid-appid']);

/** Runs one command line (without `node` and script) and returns the exit code. */
export async function runAdmin(
  argv: readonly string[],
  env: Record<string, string | undefined> = process.env,
  io: AdminIo = processIo,
): Promise<number> {
  const ctx = new CliContext(env, io.stdout);
  const fail = (code: number, message: string) => {
    io.stderr(`zentrale-admin: ${redactUrls(message)}\n`);
    return code;
  };
  try {
    await buildProgram(ctx, io).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed its message (or the help) already.
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? 0 : 2;
    }
    if (error instanceof UsageError) return fail(2, error.message);
    if (error instanceof ConfigError) return fail(2, `configuration: ${error.message}`);
    if (error instanceof ApiError) {
      const detail = error.message === error.status ? error.status : `${error.status}: ${error.message}`;
      return fail(USAGE_STATUSES.has(error.status) ? 2 : 1, detail);
    }
    return fail(1, error instanceof Error ? error.message : String(error));
  } finally {
    await ctx
      .close()
      .catch((error: unknown) => io.stderr(`zentrale-admin: closing the database: ${String(error)}\n`));
  }
}
