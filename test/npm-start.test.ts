/**
 * Stopping what `npm start` made, as Docker and most supervisors do: SIGTERM to the npm
 * process reaches the server (which runs as npm's direct child), and the stop is bounded: a
 * call still in flight after SHUTDOWN_TIMEOUT loses its connection, and the process exits.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { testEnv, until } from './helper.js';

const root = path.resolve(import.meta.dirname, '..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

for (const dialect of ['sqlite', 'postgres'] as const)
  test(`SIGTERM to npm start stops the server gracefully, within the shutdown bound (${dialect})`, async (t) => {
    const port = await freePort();
    const env = await testEnv(t, dialect, { PORT: String(port), LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT: '1' });
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: { ...process.env, ...env, PUBLIC_URL: `http://127.0.0.1:${port}`, TELEPHONY: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    npm.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const server = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`did not start:\n${output}`)), 120_000);
      npm.stdout.on('data', () => {
        const match = /"pid":(\d+)[^\n]*serves the API/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
    });
    t.after(() => {
      if (alive(server)) process.kill(server, 'SIGKILL');
    });
    assert.notEqual(server, npm.pid, 'the server is its own process');

    // An upload that never finishes holds the stop until the bound.
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.on('connect', resolve));
    socket.write(
      'POST /api/session HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"a":',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closed = new Promise((resolve) => socket.on('close', resolve));

    npm.kill('SIGTERM');
    await closed;
    await until(() => !alive(server), `the server stopped:\n${output}`);
    assert.match(output, /SIGTERM: finishing calls in flight/);
    assert.match(output, /closing their connections/);
  });
