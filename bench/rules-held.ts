/**
 * `npm run bench:rules-held`: what a node HOLDS per active rule (memory < 2 KB per active
 * rule at 10,000 rules). bench/rules.ts measures how its own process grows while it creates the
 * rules, which is mostly garbage of the creation (V8 heap capacity left behind) and caches the
 * creation filled; this measures the server as it runs with the rules in place.
 *
 * For each rule count (RULES, default `0,10000,20000`) a SQLite database (temporary DATA_DIR) is
 * prepared by a node in a child process: the same owners for every count (one per 500 rules of the
 * largest count), then the active rules with time and timeout conditions as the lateness part of
 * bench/rules.ts makes them, entry looks done. Then, per run (RUNS, default 2) and count in turn, the
 * armed timers are moved so that the first comes due FIRST seconds after the node starts (default
 * WARM + 60: no look before the measurement; FIRST=5 measures a node whose timers fire meanwhile),
 * and a fresh node (`node --expose-gc --import tsx bench/rules-node.ts`) starts on that database
 * with its rule engine running (a pass every 250 ms at most), looks at any wake due, then runs WARM
 * more seconds (default 25). Then its V8 heap after full GCs, and
 * from /proc its RSS, RssAnon (its own memory) and RssFile (pages of mapped files: SQLite maps its
 * database file, those pages are the kernel's page cache, shared and reclaimable). The figure per
 * rule is the difference to the node on the database with no rules, divided by the rule count; the
 * step from the middle to the largest count shows the slope (what fixed caches hold cancels out).
 * SQLite only (the embedded default: its caches are the ones in question). Output: Markdown.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { type ChildHandle, startChild } from './child.js';
import { readResident } from './memory.js';
import { median, sleep } from './stats.js';

if (process.env.DATABASE_URL) throw new Error('bench/rules-held.ts measures the SQLite node only');

const COUNTS = (process.env.RULES ?? '0,10000,20000').split(',').map(Number);
const RUNS = Number(process.env.RUNS ?? 2);
const WARM = Number(process.env.WARM ?? 25);
/** Seconds from the node's start to the first timer: by default after the measurement (no look). */
const FIRST = Number(process.env.FIRST ?? WARM + 60);
const USERS = Math.max(1, Math.ceil(Math.max(...COUNTS) / 500));
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Figures {
  rss: number;
  anon: number;
  file: number;
  heap: number;
}
interface Held extends Figures {
  /** V8 heap committed (heapTotal): capacity the heap keeps, used or not. */
  heapTotal: number;
  catchUp: number;
  looks: number;
  dbFile: number;
  load: number;
}

const dirs = new Map<number, string>();
const node = (dir: string): ChildHandle =>
  startChild('rules node', './rules-node.ts', {
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://127.0.0.1:8080',
    TELEPHONY: 'off',
  });

// ---- the databases
for (const count of COUNTS) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `zentrale-bench-held-${count}-`));
  dirs.set(count, dir);
  const child = node(dir);
  await child.ready;
  const { seconds } = await child.request<{ seconds: number }>({
    cmd: 'prepare',
    users: USERS,
    rules: count,
  });
  await child.stop();
  log(`prepared ${count} rules (${USERS} owners) in ${seconds.toFixed(0)} s`);
}

/**
 * Moves every armed timer of the database so that the first comes due `first` ms from now (the
 * rules as if created just before the node starts): no catch-up of wakes that passed while no
 * node ran, whose garbage would be counted as held memory.
 */
function armTimers(dir: string, first: number): void {
  const database = new SQLite(path.join(dir, 'zentrale.sqlite'));
  try {
    const { earliest } = database
      .prepare('select min(next_wake) as earliest from rule where active = 1')
      .get() as { earliest: number | null };
    if (earliest === null) return;
    const shift = Date.now() + first - earliest;
    database
      .prepare(
        'update rule set next_wake = next_wake + ?, since = since + ? where active = 1 and next_wake is not null',
      )
      .run(shift, shift);
  } finally {
    database.close();
  }
}

// ---- the nodes holding them
async function hold(count: number): Promise<Held> {
  armTimers(dirs.get(count)!, FIRST * 1000);
  const child = node(dirs.get(count)!);
  await child.ready;
  const started = Date.now();
  // Wakes that passed while no node ran are looked at first (bounded: 10 minutes).
  for (;;) {
    const { due } = await child.request<{ due: number }>({ cmd: 'due' });
    if (due === 0 || Date.now() - started > 600_000) break;
    await sleep(500);
  }
  const catchUp = (Date.now() - started) / 1000;
  await sleep(WARM * 1000);
  const memory = await child.request<{ heapUsed: number; heapTotal: number; looks: number; file: number }>({
    cmd: 'memory',
  });
  const resident = readResident(child.pid);
  const load = os.loadavg()[0]!;
  await child.stop();
  return {
    rss: resident.rss,
    anon: resident.anon,
    file: resident.file,
    heap: memory.heapUsed,
    heapTotal: memory.heapTotal,
    catchUp,
    looks: memory.looks,
    dbFile: memory.file,
    load,
  };
}

const results = new Map<number, Held[]>(COUNTS.map((count) => [count, []]));
for (let run = 1; run <= RUNS; run += 1)
  for (const count of COUNTS) {
    const held = await hold(count);
    results.get(count)!.push(held);
    log(
      `run ${run}, ${count} rules: RSS ${mb(held.rss)} MB, anon ${mb(held.anon)}, file ${mb(held.file)}, heap ${mb(held.heap)}, ${held.looks} looks, load ${held.load.toFixed(1)}`,
    );
  }

for (const dir of dirs.values()) fs.rmSync(dir, { recursive: true, force: true });

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
const kinds = ['rss', 'anon', 'file', 'heap'] as const;
const perRule = (a: Figures, b: Figures, rules: number) =>
  kinds.map((kind) => `${((b[kind] - a[kind]) / rules).toFixed(0)} B`).join(' | ');

const lines: string[] = [];
lines.push(`Held by a running node, SQLite, ${os.cpus().length} CPUs, WARM ${WARM} s, ${USERS} owners\n`);
lines.push(
  '| run | rules | database file | catch-up (looks) | RSS | RssAnon | RssFile | V8 heap after GC (committed) | load |',
);
lines.push('|---|---|---|---|---|---|---|---|---|');
for (let run = 0; run < RUNS; run += 1)
  for (const count of COUNTS) {
    const h = results.get(count)![run]!;
    lines.push(
      `| ${run + 1} | ${count} | ${mb(h.dbFile)} MB | ${h.catchUp.toFixed(0)} s (${h.looks}) | ${mb(h.rss)} MB | ${mb(h.anon)} MB | ${mb(h.file)} MB | ${mb(h.heap)} MB (${mb(h.heapTotal)}) | ${h.load.toFixed(1)} |`,
    );
  }
lines.push('');
lines.push('| per active rule | RSS | RssAnon | RssFile | V8 heap |');
lines.push('|---|---|---|---|---|');
const [base, ...others] = COUNTS;
const medianOf = (list: Held[]): Figures =>
  Object.fromEntries(kinds.map((kind) => [kind, median(list.map((h) => h[kind]))])) as unknown as Figures;
for (let run = 0; run < RUNS; run += 1) {
  for (const count of others)
    lines.push(
      `| run ${run + 1}: ${count} vs ${base} rules | ${perRule(results.get(base!)![run]!, results.get(count)![run]!, count - base!)} |`,
    );
  for (let i = 1; i < others.length; i += 1)
    lines.push(
      `| run ${run + 1}: slope ${others[i - 1]} to ${others[i]} | ${perRule(results.get(others[i - 1]!)![run]!, results.get(others[i]!)![run]!, others[i]! - others[i - 1]!)} |`,
    );
}
if (RUNS > 1)
  for (const count of others)
    lines.push(
      `| median of the runs: ${count} vs ${base} | ${perRule(medianOf(results.get(base!)!), medianOf(results.get(count)!), count - base!)} |`,
    );
console.log(lines.join('\n'));
