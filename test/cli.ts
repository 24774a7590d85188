/** The operator CLI bound to one test environment, run in this process through `runAdmin`. */
import assert from 'node:assert/strict';
import { runAdmin } from '../src/cli/program.js';

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
