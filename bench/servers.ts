/** Starting the benchmark's server processes: a Zentrale node or a reference server. */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type ChildHandle, startChild } from './child.js';

export interface RunningServer {
  readonly child: ChildHandle;
  readonly port: number;
  readonly url: string;
  /** What the server announced (Zentrale: user, username, password; fastify-sqlite: sid). */
  readonly info: Record<string, unknown>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A Zentrale node (bench/zentrale-node.ts) without logging and without the new-session rate
 * limit, on SQLite. Without `dataDir` it gets a fresh temporary DATA_DIR, removed at stop; with
 * one it runs on that directory (and the sessions saved there) and leaves it. `env` may
 * override settings (PUBLIC_URL must stay the same for a node to own saved sessions).
 */
export async function startZentrale(
  options: { dataDir?: string; env?: Record<string, string> } = {},
): Promise<RunningServer> {
  const owned = options.dataDir === undefined;
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-'));
  const port = await freePort();
  const child = startChild('zentrale', './zentrale-node.ts', {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'silent',
    SESSION_RATE_LIMIT: '0',
    DATABASE_URL: '',
    ...options.env,
  });
  const removeDir = () => {
    if (owned) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  let info: Record<string, unknown>;
  try {
    info = await child.ready;
  } catch (error) {
    removeDir();
    throw error;
  }
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    info,
    async stop() {
      await child.stop();
      removeDir();
    },
  };
}

export type ReferenceKind =
  | 'node-http'
  | 'node-http-hold'
  | 'node-http-json'
  | 'node-http-sqlite'
  | 'node-http-postgres'
  | 'fastify'
  | 'fastify-json'
  | 'fastify-sqlite';

/** A reference server of bench/reference-server.ts (`env`: BENCH_POSTGRES_URL for node-http-postgres). */
export async function startReference(
  kind: ReferenceKind,
  env: Record<string, string> = {},
): Promise<RunningServer> {
  const child = startChild(kind, './reference-server.ts', { BENCH_SERVER: kind, ...env });
  const info = await child.ready;
  const port = Number(info.port);
  return { child, port, url: `http://127.0.0.1:${port}`, info, stop: () => child.stop() };
}
