/**
 * `npm run bench:rules`: the live rule engine (performance).
 *
 *   fan-out   1,000 active rules that watch one sensor (sensor_event edges a->b for 50..100 and
 *             b->a for 0..49): the time of one `sensorValue` call that evaluates all of them, when
 *             every rule takes an edge (1,000 transitions stored with their trace) and when none
 *             does (evaluation only); median of 7 values each, wall time and the process's CPU time
 *   memory    10,000 active rules with time and timeout conditions: growth of this process's V8 heap
 *             (after full GC) and RSS while it creates them, per rule. Growth of creation, not what
 *             a node holds per rule (mostly heap capacity and caches the creation left): that is
 *             `npm run bench:rules-held` (bench/rules-held.ts), the figure the target is judged on
 *   lateness  the same 10,000 rules run for DURATION seconds (default 90): rule i leaves `a` after a
 *             timeout of 30 + i % 90 s and returns at a clock time 60 + i % 120 s after the start
 *             (then leaves again after its timeout): how late each timer look committed after its
 *             due instant (p50, p99, max)
 *
 * One node in this process on a fresh SQLite file (or DATABASE_URL for PostgreSQL). Output: Markdown.
 * Run: `npm run bench:rules` (node --expose-gc through tsx); `ONLY=fan-out` stops after the fan-out.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import type { CreateRuleBody } from '../src/modules/rule/rule.schema.js';
import { loadConfig } from '../src/platform/config.js';
import { newUuid } from '../src/platform/ids.js';
import { heapAfterGc, readRss, readRssAnon } from './memory.js';
import { median, sleep } from './stats.js';

/** A rule body as JSON (the service checks it as the route would). */
const body = (value: unknown) => value as CreateRuleBody;

const RULES = 10_000;
const FAN_OUT = 1_000;
const DURATION = Number(process.env.DURATION ?? 90);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-rules-'));
const config = loadConfig({
  DATA_DIR: dir,
  LOG_LEVEL: 'silent',
  PUBLIC_URL: 'http://127.0.0.1:8080',
  TELEPHONY: 'off',
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
});
const app = await buildApp(config);
const { rules, ruleRunner, users } = app.services;
rules.useSensors({ permitted: async () => true });

let userCount = 0;
async function owners(count: number): Promise<string[]> {
  const list: string[] = [];
  for (let i = 0; i < count; i += 1) {
    userCount += 1;
    const user = await users.createUser({
      username: `bench${process.pid}x${userCount}`,
      password: 'secret-pw',
      firstname: 'Bench',
      lastname: 'Rules',
      email: `bench${process.pid}x${userCount}@example.com`,
    });
    list.push(user.uuid);
  }
  return list;
}

async function settle(): Promise<void> {
  // Entry looks of new rules are done when no rule waits for one.
  for (;;) {
    const left = await app.database.db
      .selectFrom('rule')
      .select('uuid')
      .where('look', '=', 'start')
      .limit(1)
      .execute();
    if (left.length === 0) return;
    await sleep(100);
  }
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const rows: string[] = [];

// ---- fan-out
{
  const sensor = newUuid();
  const fanOwners = await owners(FAN_OUT / 500);
  for (let i = 0; i < FAN_OUT; i += 1)
    await rules.createRule(
      fanOwners[Math.floor(i / 500)]!,
      body({
        name: `watch${i}`,
        initial_state: 'a',
        edges: [
          {
            from: 'a',
            to: 'b',
            conditions: [{ type: 'sensor_event', sensor, min: [50], max: [100] }],
            actions: [],
          },
          {
            from: 'b',
            to: 'a',
            conditions: [{ type: 'sensor_event', sensor, min: [0], max: [49] }],
            actions: [],
          },
        ],
      }),
    );
  await settle();
  const moving: number[] = [];
  const still: number[] = [];
  // CPU time of the process per value (SQLite runs in it): moves less with other load than wall time.
  const movingCpu: number[] = [];
  const stillCpu: number[] = [];
  for (let round = 0; round < 8; round += 1) {
    for (const [value, list, cpuList] of [
      [70, moving, movingCpu],
      [30, moving, movingCpu],
      [20, still, stillCpu],
    ] as const) {
      const start = performance.now();
      const cpuStart = process.cpuUsage();
      await ruleRunner.sensorValue(sensor, [value]);
      const cpu = process.cpuUsage(cpuStart);
      if (round > 0) {
        list.push(performance.now() - start);
        cpuList.push((cpu.user + cpu.system) / 1000);
      }
    }
  }
  rows.push(
    `| sensor value reaching ${FAN_OUT} rules, every rule takes an edge (CPU) | ${median(moving).toFixed(1)} ms (${median(movingCpu).toFixed(1)} ms) | < 50 ms |`,
  );
  rows.push(
    `| sensor value reaching ${FAN_OUT} rules, no rule takes an edge (CPU) | ${median(still).toFixed(1)} ms (${median(stillCpu).toFixed(1)} ms) | < 50 ms |`,
  );
  await app.database.db.updateTable('rule').set({ active: 0, next_wake: null }).execute();
}
if (process.env.ONLY === 'fan-out') {
  console.log(['| figure | measured | target |', '|---|---|---|', ...rows].join('\n'));
  await app.close();
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

// ---- memory
const heapBefore = (await heapAfterGc()).heapUsed;
const rssBefore = readRss(process.pid);
const anonBefore = readRssAnon(process.pid);
const start = Date.now();
const clock = (offset: number) => new Date(start + offset * 1000).toISOString().slice(11, 19);
const timerOwners = await owners(RULES / 500);
for (let i = 0; i < RULES; i += 1)
  await rules.createRule(
    timerOwners[Math.floor(i / 500)]!,
    body({
      name: `timer${i}`,
      initial_state: 'a',
      edges: [
        { from: 'a', to: 'b', conditions: [{ type: 'timeout', value: 30 + (i % 90) }], actions: [] },
        { from: 'b', to: 'a', conditions: [{ type: 'time', value: clock(60 + (i % 120)) }], actions: [] },
      ],
    }),
  );
await settle();
const heapAfter = (await heapAfterGc()).heapUsed;
const rssAfter = readRss(process.pid);
const anonAfter = readRssAnon(process.pid);
const created = (Date.now() - start) / 1000;
rows.push(
  `| growth while creating: V8 heap per rule (${RULES} rules, after GC) | ${((heapAfter - heapBefore) / RULES).toFixed(0)} B | |`,
);
rows.push(
  `| growth while creating: RSS per rule (not held: see bench:rules-held) | ${((rssAfter - rssBefore) / RULES).toFixed(0)} B | |`,
);
rows.push(
  `| of it anonymous (RssAnon: without the database file's mapped pages) | ${((anonAfter - anonBefore) / RULES).toFixed(0)} B | |`,
);

// ---- lateness
const late: number[] = [];
ruleRunner.onLate = (ms) => late.push(ms);
await sleep(DURATION * 1000);
ruleRunner.onLate = undefined;
late.sort((a, b) => a - b);
rows.push(
  `| timer looks in ${DURATION} s (rules created in ${created.toFixed(0)} s) | ${late.length} (${(late.length / DURATION).toFixed(0)}/s) | |`,
);
rows.push(
  `| timer lateness p50 / p99 / max | ${pct(late, 0.5)} / ${pct(late, 0.99)} / ${late.at(-1)} ms | p99 < 1000 ms |`,
);

await app.close();
fs.rmSync(dir, { recursive: true, force: true });
console.log(`Rule engine, ${app.database.dialect}, ${os.cpus().length} CPUs\n`);
console.log('| figure | measured | target |\n|---|---|---|');
console.log(rows.join('\n'));
