/**
 * `npx tsx bench/call-admission.ts [--postgres URL --ops 2000 --concurrency 20]`: the database work
 * the concurrent-call quota adds to a call's setup (several nodes). Two nodes (apps) on
 * one database: SQLite (one node only) by default, PostgreSQL with `--postgres` (an empty
 * database). Measured, each `ops` times:
 * - before: the count the old admission made (the user's first legs in `running_call` on other
 *   live nodes; not atomic), one query;
 * - admit: CallDirectory.admitCall, the atomic admission (PostgreSQL: `call_admit`), and the
 *   release that deletes it after the call (off the setup path, timed apart);
 * - admit at `concurrency` at once, half through each node, for one user whose quota is far.
 * Latency per operation (mean, p50, p99) on the calling side; the figures go to stdout.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { CallAreaRecorder } from '../src/modules/call/index.js';
import { systemClock } from '../src/platform/clock.js';
import { loadConfig } from '../src/platform/config.js';
import { newUuid } from '../src/platform/ids.js';

const { values } = parseArgs({
  options: {
    postgres: { type: 'string' },
    ops: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '20' },
  },
});
const OPS = Number(values.ops);
const CONCURRENCY = Number(values.concurrency);

function stats(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const mean = sorted.reduce((sum, x) => sum + x, 0) / Math.max(1, sorted.length);
  return `mean ${mean.toFixed(3)} ms, p50 ${at(0.5).toFixed(3)} ms, p99 ${at(0.99).toFixed(3)} ms`;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

const dirs: string[] = [];
const env = (port: number) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-admission-'));
  dirs.push(dir);
  return loadConfig({
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    TELEPHONY: 'off',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    ...(values.postgres ? { DATABASE_URL: values.postgres } : {}),
  });
};
const first = await buildApp(env(18091));
const apps = values.postgres ? [first, await buildApp(env(18092))] : [first];
try {
  const directories = apps.map(
    (app) => new CallAreaRecorder(app.services, app.database.db, app.server.log, systemClock),
  );
  const { db } = first.database;
  const owner = newUuid();
  const cpu0 = process.cpuUsage();

  const before: number[] = [];
  for (let i = 0; i < OPS; i++)
    before.push(
      await timed(() =>
        db
          .selectFrom('running_call')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('owner', '=', owner)
          .where('parent', 'is', null)
          .where('node', '!=', 'n0')
          .where('heartbeat', '>=', Date.now() - 120_000)
          .executeTakeFirst(),
      ),
    );

  const admission = (i: number) => ({
    id: newUuid(),
    node: `n${i % apps.length}`,
    owner,
    limit: 1_000_000,
    group: null,
    aliveSince: Date.now() - 120_000,
    now: Date.now(),
  });
  const admit: number[] = [];
  const release: number[] = [];
  for (let i = 0; i < OPS; i++) {
    const a = admission(i);
    const directory = directories[i % directories.length]!;
    admit.push(await timed(() => directory.admitCall(a)));
    release.push(await timed(() => directory.releaseCalls([a.id])));
  }

  const concurrent: number[] = [];
  for (let done = 0; done < OPS; done += CONCURRENCY) {
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, i) => {
        const directory = directories[i % directories.length]!;
        concurrent.push(await timed(() => directory.admitCall(admission(i))));
      }),
    );
  }
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `database: ${values.postgres ? 'PostgreSQL, two nodes' : 'SQLite, one node'}; ${OPS} operations each`,
  );
  console.log(`before (count of other nodes' first legs): ${stats(before)}`);
  console.log(`admit (call_admit / conditional INSERT): ${stats(admit)}`);
  console.log(`release (DELETE in a Writer transaction, after the call): ${stats(release)}`);
  console.log(`admit, ${CONCURRENCY} at once over ${apps.length} node(s): ${stats(concurrent)}`);
  console.log(`bench process CPU: ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`);
} finally {
  for (const app of apps) await app.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
}
