/** The operator CLI bound to one test environment, run in this process through `runAdmin`. */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { buildApp } from '../src/app.js';
import { runAdmin } from '../src/cli/program.js';
import { loadConfig } from '../src/platform/config.js';
import { type Dialect, testEnv } from './helper.js';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI bound to one test database, run in this process through `runAdmin`. */
export function cliFor(env: Record<string, string>) {
  const run = async (...args: string[]): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    const code = await runAdmin(args, env, {
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
    });
    return { code, stdout, stderr };
  };
  return {
    run,
    /** Runs with --json, expects success, returns the parsed output. */
    // biome-ignore lint/suspicious/noExplicitAny: parsed output, checked by the assertions.
    async json(...args: string[]): Promise<any> {
      const result = await run(...args, '--json');
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return JSON.parse(result.stdout);
    },
    /** Expects the exit code and a message on stderr matching `message`, nothing on stdout. */
    async fails(code: number, message: RegExp, ...args: string[]): Promise<void> {
      const result = await run(...args);
      assert.equal(result.code, code, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    },
  };
}

/**
 * An app and the CLI over one fresh database, with users made through the service (password
 * `secret-pw`, e-mail `<username>@example.com`); the app is closed after the test.
 */
export async function cliWithUsers(t: TestContext, dialect: Dialect, usernames: string[]) {
  const env = await testEnv(t, dialect);
  const app = await buildApp(loadConfig(env));
  t.after(() => app.close());
  const users = [];
  for (const username of usernames)
    users.push(
      await app.services.users.createUser({
        username,
        password: 'secret-pw',
        firstname: username.slice(0, 1).toUpperCase(),
        lastname: 'D',
        email: `${username}@example.com`,
      }),
    );
  return { env, app, cli: cliFor(env), users };
}
