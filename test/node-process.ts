/**
 * A Zentrale node as its own process (`src/main.ts`), for the tests that kill or stop real
 * servers (test/processes.test.ts, the rule engine across kill -9).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { freeTcpPort } from '../src/platform/ports.js';

const root = path.resolve(import.meta.dirname, '..');

export interface NodeProcess {
  url: string;
  process: ChildProcess;
  exited: Promise<number | null>;
}

/** Starts a node on `port` (a free one when not given) and waits until it serves; killed after the test. */
export async function startNode(
  t: TestContext,
  env: Record<string, string>,
  port?: number,
): Promise<NodeProcess> {
  const listen = port ?? (await freeTcpPort());
  const url = `http://127.0.0.1:${listen}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(listen), PUBLIC_URL: url, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('serves the API')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', () => reject(new Error(`node exited:\n${output}`)));
  });
  return { url, process: child, exited };
}
