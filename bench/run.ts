/**
 * `npm run bench [-- http|longpoll|objects] [options]`: the platform benchmarks, described
 * with their figures in docs/benchmarks.md. Without a part it runs http and longpoll (objects
 * takes a quarter of an hour: asked for by name). Progress goes to stderr; the summary
 * (Markdown, or JSON with --json) goes to stdout.
 *
 *   http      (a) GET /api/session with a Bearer sid against bare node:http, same autocannon
 *             settings; unless --no-references also (c) GET /api/language, plain Fastify, and
 *             Fastify reading the session from SQLite.
 *   longpoll  (b) 10,000 idle long-polls: server memory per poll against bare node:http, and
 *             the time until one event reaches every client.
 *   objects   GET and POST /api/contact against bare node:http doing the same JSON work, on
 *             SQLite and PostgreSQL, and the write at 1k, 10k and 100k objects per user
 *             (bench/objects-bench.ts; --sizes, --databases).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type HttpResult, runHttpBench } from './http-bench.js';
import { type LongPollResult, runLongPollBench } from './longpoll-bench.js';
import { openFileLimit } from './memory.js';
import { objectsSummary, runObjectsBench } from './objects-bench.js';

const TARGET_RATIO = 0.5;
const TARGET_BYTES_PER_POLL = 16 * 1024;
const TARGET_DELIVERY_MS = 1000;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    connections: { type: 'string', default: '50' },
    pipelining: { type: 'string', default: '1' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    'no-references': { type: 'boolean', default: false },
    polls: { type: 'string', default: '10000' },
    'login-concurrency': { type: 'string', default: '8' },
    json: { type: 'boolean', default: false },
    profile: { type: 'string' },
    sizes: { type: 'string', default: '1000,10000,100000' },
    databases: { type: 'string', default: 'sqlite,postgres' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

const USAGE = `usage: npm run bench -- [http|longpoll|objects] [--rounds N] [--duration S] [--warmup S]
       [--connections N] [--pipelining N] [--no-references] [--polls N] [--login-concurrency N] [--json]
       [--sizes 1000,10000,100000] [--databases sqlite,postgres]   (objects)
       [--profile DIR]   CPU profiles of the Zentrale node while measured (.cpuprofile files)`;

function whole(name: string, raw: string | undefined, min: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be a whole number >= ${min}`);
  return value;
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const fixed = (value: number, digits = 0) => value.toFixed(digits);
const met = (ok: boolean) => (ok ? 'met' : 'MISSED');

function machine(): string {
  const cpus = os.cpus();
  return `${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GB RAM, Linux ${os.release()}, Node ${process.version}`;
}

function httpSummary(result: HttpResult): string[] {
  const { options } = result;
  const lines = [
    `### (a) session-checked call vs bare node:http`,
    '',
    `autocannon: ${options.connections} connections, pipelining ${options.pipelining}, ` +
      `${options.warmup} s warm-up + ${options.duration} s measured per target, ${options.rounds} rounds; medians.`,
    '',
    '| target | req/s | p50 ms | p99 ms | server CPU | server CPU µs/request | req/s per round |',
    '|---|---:|---:|---:|---:|---:|---|',
  ];
  for (const target of result.targets) {
    const m = target.median;
    const perRound = target.rounds.map((r) => fixed(r.requestsPerSecond)).join(', ');
    lines.push(
      `| ${target.label} | ${fixed(m.requestsPerSecond)} | ${m.p50} | ${m.p99} | ${fixed(m.serverCpu * 100)} % | ` +
        `${fixed(m.cpuPerRequest, 1)} | ${perRound} |`,
    );
  }
  lines.push(
    '',
    `Ratio Zentrale session call / bare node:http: ${fixed(result.ratio * 100, 1)} % ` +
      `(per round: ${result.ratios.map((r) => `${fixed(r * 100, 1)} %`).join(', ')}); ` +
      `target >= ${TARGET_RATIO * 100} %: ${met(result.ratio >= TARGET_RATIO)}.`,
    `Server CPU per request, bare node:http / Zentrale session call: ${fixed(result.cpuRatio * 100, 1)} % ` +
      '(the throughput ratio if the server alone were the limit).',
  );
  return lines;
}

function longPollSummary(result: LongPollResult): string[] {
  const { zentrale: z, bare: b, loginSeconds } = result.median;
  const polls = result.options.polls;
  const kb = (bytes: number) => fixed(bytes / 1024, 2);
  const mb = (bytes: number) => fixed(bytes / 2 ** 20, 1);
  const lines = [
    `### (b) ${polls} idle long-polls`,
    '',
    `${result.options.rounds} rounds, fresh server processes each; medians. Sessions created once by ${polls} logins ` +
      `(${fixed(loginSeconds, 1)} s) on a node that was then restarted on the saved sessions.`,
    '',
    '| server | RSS before | RSS after | RSS per poll | heap per poll | external per poll | delivered | ' +
      'emit call | last answer written | last answer received |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [name, m] of [
    ['Zentrale GET /api/event?timeout=300', z],
    ['bare node:http, pending requests', b],
  ] as const) {
    lines.push(
      `| ${name} | ${mb(m.rssBefore)} MB | ${mb(m.rssAfter)} MB | ${kb(m.rssPerPoll)} KB | ${kb(m.heapPerPoll)} KB | ` +
        `${kb(m.externalPerPoll)} KB | ${m.delivered}/${polls} | ${fixed(m.emitMs)} ms | ${fixed(m.serverMs)} ms | ` +
        `${fixed(m.deliveryMs)} ms |`,
    );
  }
  const perRound = result.rounds
    .map((r) => `${kb(r.zentrale.rssPerPoll)} KB / ${fixed(r.zentrale.deliveryMs)} ms`)
    .join('; ');
  lines.push(
    '',
    'Times are from the emit (bare: from the start of the loop answering every held request).',
    `Zentrale per round (RSS per poll / delivery): ${perRound}.`,
    `Target < 16 KB server memory per poll: ${met(z.rssPerPoll < TARGET_BYTES_PER_POLL)}. ` +
      `Target event at every client within ${TARGET_DELIVERY_MS} ms: ` +
      `${met(z.deliveryMs <= TARGET_DELIVERY_MS && z.delivered === polls && z.failed === 0)}.`,
  );
  return lines;
}

async function main(): Promise<void> {
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const part = positionals[0] ?? 'all';
  if (!['all', 'http', 'longpoll', 'objects'].includes(part) || positionals.length > 1)
    throw new Error(USAGE);
  const rounds = whole('rounds', values.rounds, 1);
  const polls = whole('polls', values.polls, 1);
  const profileDir = values.profile === undefined ? undefined : path.resolve(values.profile);
  if (profileDir) fs.mkdirSync(profileDir, { recursive: true });

  const output: string[] = [`## Benchmarks, ${new Date().toISOString()}`, '', `Machine: ${machine()}.`, ''];
  const json: Record<string, unknown> = { date: new Date().toISOString(), machine: machine() };

  if (part === 'all' || part === 'http') {
    log('(a) HTTP throughput');
    const result = await runHttpBench(
      {
        connections: whole('connections', values.connections, 1),
        pipelining: whole('pipelining', values.pipelining, 1),
        duration: whole('duration', values.duration, 1),
        warmup: whole('warmup', values.warmup, 0),
        rounds,
        references: !values['no-references'],
        profileDir,
      },
      log,
    );
    json.http = result;
    output.push(...httpSummary(result), '');
  }

  if (part === 'all' || part === 'longpoll') {
    // Each side (server, clients) holds one descriptor per poll, plus its own few.
    const limit = openFileLimit();
    if (limit < polls + 256) {
      throw new Error(
        `open-file limit ${limit} is too low for ${polls} long-polls; run through \`npm run bench\`, which raises it`,
      );
    }
    log(`(b) ${polls} idle long-polls`);
    const result = await runLongPollBench(
      {
        polls,
        rounds,
        loginConcurrency: whole('login-concurrency', values['login-concurrency'], 1),
        profileDir,
      },
      log,
    );
    json.longpoll = result;
    output.push(...longPollSummary(result), '');
  }

  if (part === 'objects') {
    const sizes = (values.sizes ?? '').split(',').map((size) => whole('sizes', size, 1));
    const dialects = (values.databases ?? '').split(',');
    if (!dialects.every((d) => d === 'sqlite' || d === 'postgres'))
      throw new Error('--databases is a comma list of sqlite and postgres');
    const options = {
      connections: whole('connections', values.connections, 1),
      duration: whole('duration', values.duration, 1),
      warmup: whole('warmup', values.warmup, 0),
      rounds,
      sizes,
      dialects: dialects as ('sqlite' | 'postgres')[],
      profileDir,
    };
    log('objects: the contact routes against bare node:http');
    const result = await runObjectsBench(options, log);
    json.objects = result;
    output.push(...objectsSummary(result, options), '');
  }

  process.stdout.write(values.json ? `${JSON.stringify(json, null, 2)}\n` : `${output.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
