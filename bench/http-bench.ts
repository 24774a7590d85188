/**
 * Benchmark (a), with (c) for reference: requests per second and latency of an authenticated,
 * session-checked call (GET /api/session re-using a logged-in session's sid as Bearer) next to
 * a bare node:http server answering `{"status":"ok"}`, measured in the same run with the same
 * autocannon settings. Each server runs in its own process; autocannon runs in this one.
 * Targets are measured in turn, round after round, so that drifting load from other work on
 * the machine spreads over all of them; the figures are the medians over the rounds.
 */
import path from 'node:path';
import autocannon from 'autocannon';
import { readCpuSeconds } from './memory.js';
import { type RunningServer, startReference, startZentrale } from './servers.js';
import { median } from './stats.js';

export interface HttpOptions {
  connections: number;
  pipelining: number;
  duration: number;
  warmup: number;
  rounds: number;
  /** Also measure the reference targets (c). */
  references: boolean;
  /** When set, a CPU profile of the Zentrale node during each measured session run goes here. */
  profileDir?: string | undefined;
}

export interface Target {
  readonly key: string;
  readonly label: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  /** The server process, whose CPU time is read around each run. */
  readonly pid: number;
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
  /** CPU seconds of the server's processes so far, when more than `pid` counts (PostgreSQL). */
  readonly cpu?: () => number;
}

export interface Measurement {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Share of one core the server process used while measured. */
  serverCpu: number;
  /** Server CPU time per answered request, microseconds: independent of who was the bottleneck. */
  cpuPerRequest: number;
}

export interface TargetResult {
  key: string;
  label: string;
  rounds: Measurement[];
  median: Measurement;
}

export interface HttpResult {
  options: HttpOptions;
  targets: TargetResult[];
  /** Zentrale session call req/s over bare node:http req/s, per round and their median. */
  ratios: number[];
  ratio: number;
  /** Bare node:http server CPU per request over Zentrale's: the ratio were the server alone the limit. */
  cpuRatio: number;
}

export async function measure(
  target: Target,
  options: Pick<HttpOptions, 'connections' | 'pipelining'>,
  seconds: number,
): Promise<Measurement> {
  const cpuOf = target.cpu ?? (() => readCpuSeconds(target.pid));
  const cpuBefore = cpuOf();
  const result = await autocannon({
    url: target.url,
    headers: target.headers,
    method: target.method ?? 'GET',
    ...(target.body === undefined ? {} : { body: target.body }),
    connections: options.connections,
    pipelining: options.pipelining,
    duration: seconds,
  });
  const cpu = cpuOf() - cpuBefore;
  const failures = result.errors + result.timeouts + result.non2xx;
  if (failures > 0 || result['2xx'] === 0) {
    throw new Error(`${target.label}: ${failures} failed requests of ${result.requests.total}`);
  }
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    serverCpu: cpu / result.duration,
    cpuPerRequest: (cpu / result['2xx']) * 1e6,
  };
}

/** Checks the call does what it claims (an authenticated session answered) before timing it. */
async function expectStatus(target: Target, check: (body: Record<string, unknown>) => boolean) {
  const response = await fetch(target.url, { headers: target.headers });
  const body = (await response.json()) as Record<string, unknown>;
  if (!check(body)) throw new Error(`${target.label}: unexpected answer ${JSON.stringify(body)}`);
}

export async function loginOnce(zentrale: RunningServer): Promise<string> {
  const response = await fetch(`${zentrale.url}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: zentrale.info.username, password: zentrale.info.password }),
  });
  const body = (await response.json()) as { status: string; sid?: string };
  if (body.status !== 'ok' || !body.sid) throw new Error(`login failed: ${JSON.stringify(body)}`);
  return body.sid;
}

export async function runHttpBench(options: HttpOptions, log: (line: string) => void): Promise<HttpResult> {
  const servers: RunningServer[] = [];
  try {
    const bare = await startReference('node-http');
    servers.push(bare);
    const zentrale = await startZentrale();
    servers.push(zentrale);
    const sid = await loginOnce(zentrale);

    const targets: Target[] = [
      {
        key: 'bare',
        label: 'bare node:http {"status":"ok"}',
        url: `${bare.url}/`,
        headers: {},
        pid: bare.child.pid,
      },
      {
        key: 'session',
        label: 'Zentrale GET /api/session (Bearer sid)',
        url: `${zentrale.url}/api/session`,
        headers: { authorization: `Bearer ${sid}` },
        pid: zentrale.child.pid,
      },
    ];
    await expectStatus(targets[1]!, (body) => body.status === 'ok' && body.auth === true && body.sid === sid);

    if (options.references) {
      const fastify = await startReference('fastify');
      servers.push(fastify);
      const sqlite = await startReference('fastify-sqlite');
      servers.push(sqlite);
      const references: Target[] = [
        {
          key: 'language',
          label: 'Zentrale GET /api/language',
          url: `${zentrale.url}/api/language`,
          headers: {},
          pid: zentrale.child.pid,
        },
        {
          key: 'fastify',
          label: 'plain Fastify route {"status":"ok"}',
          url: `${fastify.url}/`,
          headers: {},
          pid: fastify.child.pid,
        },
        {
          key: 'fastify-sqlite',
          label: 'plain Fastify route, session read from SQLite',
          url: `${sqlite.url}/`,
          headers: { authorization: `Bearer ${String(sqlite.info.sid)}` },
          pid: sqlite.child.pid,
        },
      ];
      await expectStatus(references[2]!, (body) => body.status === 'ok' && body.kind === 'user');
      targets.push(...references);
    }

    const rounds = new Map<string, Measurement[]>(targets.map((target) => [target.key, []]));
    for (let round = 1; round <= options.rounds; round += 1) {
      for (const target of targets) {
        if (options.warmup > 0) await measure(target, options, options.warmup);
        const profile = options.profileDir !== undefined && target.key === 'session';
        if (profile) await zentrale.child.request({ cmd: 'profile-start' });
        const measured = await measure(target, options, options.duration);
        if (profile) {
          const file = path.join(options.profileDir!, `http-session-${round}.cpuprofile`);
          await zentrale.child.request({ cmd: 'profile-stop', file });
        }
        rounds.get(target.key)!.push(measured);
        log(
          `round ${round}/${options.rounds} ${target.label}: ${measured.requestsPerSecond.toFixed(0)} req/s, ` +
            `p50 ${measured.p50} ms, p99 ${measured.p99} ms, server CPU ${(measured.serverCpu * 100).toFixed(0)} %, ` +
            `${measured.cpuPerRequest.toFixed(1)} µs/request`,
        );
      }
    }

    const results: TargetResult[] = targets.map((target) => {
      const measured = rounds.get(target.key)!;
      return {
        key: target.key,
        label: target.label,
        rounds: measured,
        median: {
          requestsPerSecond: median(measured.map((m) => m.requestsPerSecond)),
          p50: median(measured.map((m) => m.p50)),
          p99: median(measured.map((m) => m.p99)),
          serverCpu: median(measured.map((m) => m.serverCpu)),
          cpuPerRequest: median(measured.map((m) => m.cpuPerRequest)),
        },
      };
    });
    const bareRounds = rounds.get('bare')!;
    const ratios = rounds
      .get('session')!
      .map((m, i) => m.requestsPerSecond / bareRounds[i]!.requestsPerSecond);
    const cpuRatio = median(
      rounds.get('session')!.map((m, i) => bareRounds[i]!.cpuPerRequest / m.cpuPerRequest),
    );
    return { options, targets: results, ratios, ratio: median(ratios), cpuRatio };
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}
