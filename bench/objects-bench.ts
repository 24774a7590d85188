/**
 * `npm run bench -- objects` (docs/benchmarks.md "Object store"): the object path beside bare
 * node:http, in one run.
 * For SQLite and then PostgreSQL (an embedded one, scripts/embedded-postgres.mjs), a Zentrale
 * node and a bare node:http server doing the same JSON work in memory (bench/reference-server.ts
 * `node-http-json`) are measured in turn, round after round, with the same autocannon settings:
 *   read   GET /api/contact/{uuid} of one of the user's contacts (Bearer sid)
 *   write  POST /api/contact {firstname, lastname}
 * Beside them, the floors of the parts Zentrale stands on, measured in the same rounds: plain
 * Fastify routes doing the same JSON work (`fastify-json`: what the framework costs), and bare
 * node:http keeping the contact in the same database with one statement per request
 * (`node-http-sqlite` / `node-http-postgres`: what storing costs). A goal above a floor's ratio
 * can't be met by any server built on that part.
 * Each figure is req/s, p99 and the server's CPU per request (the node process; on PostgreSQL
 * also node and postgres together, all of the postmaster's processes). Then the write cost as
 * the user's objects grow: the node's store is filled (bench/zentrale-node.ts `fill`) to each
 * size and the write measured again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startEmbeddedPostgres } from '../scripts/embedded-postgres.mjs';
import { loginOnce, type Measurement, measure, type Target } from './http-bench.js';
import { readCpuSeconds } from './memory.js';
import { type RunningServer, startReference, startZentrale } from './servers.js';
import { median } from './stats.js';

export interface ObjectsOptions {
  connections: number;
  duration: number;
  warmup: number;
  rounds: number;
  /** Objects per user at which the write is measured again. */
  sizes: number[];
  dialects: ('sqlite' | 'postgres')[];
  /** When set, a CPU profile of the Zentrale node during each measured read and write run goes here. */
  profileDir?: string | undefined;
}

export interface DialectResult {
  dialect: 'sqlite' | 'postgres';
  /**
   * Medians over the rounds, by target key: bare-read, fastify-read, db-read, read, and the same
   * for -write (fastify- and db- are the floors).
   */
  targets: Record<string, Measurement>;
  /** On PostgreSQL: CPU µs per request of node and postgres together, by target key. */
  withDatabase: Record<string, number>;
  /** Bare node:http CPU per request over Zentrale's (node process only): 1 is bare node's cost. */
  readRatio: number;
  writeRatio: number;
  /** The floors' ratios the same way: bare node:http's CPU per request over the floor's. */
  floors: { fastifyRead: number; fastifyWrite: number; dbRead: number; dbWrite: number };
  /** On PostgreSQL: the database floor's ratio with postgres's CPU counted on its side, as for Zentrale. */
  floorsWithDatabase?: { dbRead: number; dbWrite: number };
  /** The write at each size of the user's store. */
  scale: { objects: number; measurement: Measurement; withDatabase?: number }[];
}

/** CPU seconds of the postmaster and its children (the backends, the writers). */
function postgresCpu(postmaster: number): number {
  let total = readCpuSeconds(postmaster);
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === postmaster) total += readCpuSeconds(Number(name));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

async function call(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const response = await fetch(url, init);
  return (await response.json()) as Record<string, unknown>;
}

async function runDialect(
  dialect: 'sqlite' | 'postgres',
  options: ObjectsOptions,
  log: (line: string) => void,
): Promise<DialectResult> {
  const servers: { stop(): Promise<void> }[] = [];
  try {
    const postgres =
      dialect === 'postgres' ? await startEmbeddedPostgres(['-c', 'max_connections=200']) : undefined;
    if (postgres) servers.push(postgres);
    const bare = await startReference('node-http-json');
    servers.push(bare);
    const framework = await startReference('fastify-json');
    servers.push(framework);
    const stored = await startReference(
      postgres ? 'node-http-postgres' : 'node-http-sqlite',
      postgres ? { BENCH_POSTGRES_URL: postgres.url } : {},
    );
    servers.push(stored);
    const zentrale: RunningServer = await startZentrale({ env: { DATABASE_URL: postgres?.url ?? '' } });
    servers.push(zentrale);
    const sid = await loginOnce(zentrale);
    const auth = { authorization: `Bearer ${sid}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ firstname: 'Grace', lastname: 'Hopper' });
    const created = await call(`${zentrale.url}/api/contact`, { method: 'POST', headers: auth, body });
    if (created.status !== 'ok' || typeof created.uuid !== 'string')
      throw new Error(`POST /api/contact: ${JSON.stringify(created)}`);
    const read = await call(`${zentrale.url}/api/contact/${created.uuid}`, { headers: auth });
    if (read.status !== 'ok') throw new Error(`GET /api/contact: ${JSON.stringify(read)}`);

    // On PostgreSQL a server that stores is measured a second time with postgres's CPU on its side.
    const withPostgres = (pid: number) =>
      postgres ? () => readCpuSeconds(pid) + postgresCpu(postgres.pid) : undefined;
    const json = { 'content-type': 'application/json' };
    type Measured = Target & { withDb?: (() => number) | undefined };
    const reference = (server: RunningServer, key: string, label: string, stores: boolean): Measured[] => [
      {
        key: `${key}-read`,
        label: `${label} GET`,
        url: `${server.url}/contact/${String(server.info.contact)}`,
        headers: {},
        pid: server.child.pid,
        withDb: stores ? withPostgres(server.child.pid) : undefined,
      },
      {
        key: `${key}-write`,
        label: `${label} POST`,
        url: `${server.url}/contact`,
        method: 'POST',
        body,
        headers: json,
        pid: server.child.pid,
        withDb: stores ? withPostgres(server.child.pid) : undefined,
      },
    ];
    const [bareRead, bareWrite] = reference(bare, 'bare', 'bare node:http', false);
    const [fastifyRead, fastifyWrite] = reference(framework, 'fastify', 'plain Fastify', false);
    const [dbRead, dbWrite] = reference(stored, 'db', `bare node:http + ${dialect}`, true);
    const write: Measured = {
      key: 'write',
      label: 'Zentrale POST /api/contact',
      url: `${zentrale.url}/api/contact`,
      method: 'POST',
      body,
      headers: auth,
      pid: zentrale.child.pid,
      withDb: withPostgres(zentrale.child.pid),
    };
    const targets: Measured[] = [
      bareRead!,
      fastifyRead!,
      dbRead!,
      {
        key: 'read',
        label: 'Zentrale GET /api/contact/{uuid}',
        url: `${zentrale.url}/api/contact/${created.uuid}`,
        headers: auth,
        pid: zentrale.child.pid,
        withDb: withPostgres(zentrale.child.pid),
      },
      bareWrite!,
      fastifyWrite!,
      dbWrite!,
      write,
    ];
    const settings = { connections: options.connections, pipelining: 1 };
    const rounds = new Map<string, Measurement[]>(targets.map((target) => [target.key, []]));
    const withDb = new Map<string, number[]>();
    for (let round = 1; round <= options.rounds; round += 1) {
      for (const target of targets) {
        if (options.warmup > 0) await measure(target, settings, options.warmup);
        const profile = options.profileDir !== undefined && target.pid === zentrale.child.pid;
        if (profile) await zentrale.child.request({ cmd: 'profile-start' });
        const measured = await measure(target, settings, options.duration);
        if (profile) {
          const file = path.join(options.profileDir!, `objects-${dialect}-${target.key}-${round}.cpuprofile`);
          await zentrale.child.request({ cmd: 'profile-stop', file });
        }
        rounds.get(target.key)!.push(measured);
        let both = '';
        if (target.withDb) {
          const together = await measure({ ...target, cpu: target.withDb }, settings, options.duration);
          withDb.set(target.key, [...(withDb.get(target.key) ?? []), together.cpuPerRequest]);
          both = `, with postgres ${together.cpuPerRequest.toFixed(1)} µs/request`;
        }
        log(
          `${dialect} round ${round}/${options.rounds} ${target.label}: ${measured.requestsPerSecond.toFixed(0)} req/s, ` +
            `p99 ${measured.p99} ms, ${measured.cpuPerRequest.toFixed(1)} µs/request${both}`,
        );
      }
    }
    const medians = Object.fromEntries(
      targets.map((target) => {
        const m = rounds.get(target.key)!;
        return [
          target.key,
          {
            requestsPerSecond: median(m.map((x) => x.requestsPerSecond)),
            p50: median(m.map((x) => x.p50)),
            p99: median(m.map((x) => x.p99)),
            serverCpu: median(m.map((x) => x.serverCpu)),
            cpuPerRequest: median(m.map((x) => x.cpuPerRequest)),
          },
        ];
      }),
    );
    const ratio = (bareKey: string, key: string) =>
      median(rounds.get(key)!.map((m, i) => rounds.get(bareKey)![i]!.cpuPerRequest / m.cpuPerRequest));
    // With postgres: per-round pairs are not kept, so the medians' ratio.
    const ratioWithDb = (bareKey: string, key: string) =>
      median(rounds.get(bareKey)!.map((m) => m.cpuPerRequest)) / median(withDb.get(key) ?? [Number.NaN]);

    // The write as the store grows: objects the user holds now (the writes above included).
    const scale: DialectResult['scale'] = [];
    let held = await countObjects(zentrale);
    for (const size of [...options.sizes].sort((a, b) => a - b)) {
      if (size > held) {
        log(`${dialect}: filling the user's store from ${held} to ${size} objects`);
        await zentrale.child.request({ cmd: 'fill', count: size - held });
        held = size;
      }
      if (options.warmup > 0) await measure(write, settings, options.warmup);
      const measurement = await measure(write, settings, options.duration);
      const together = write.withDb
        ? (await measure({ ...write, cpu: write.withDb }, settings, options.duration)).cpuPerRequest
        : undefined;
      log(
        `${dialect} write at ${size} objects: ${measurement.requestsPerSecond.toFixed(0)} req/s, ` +
          `p99 ${measurement.p99} ms, ${measurement.cpuPerRequest.toFixed(1)} µs/request`,
      );
      scale.push({
        objects: size,
        measurement,
        ...(together === undefined ? {} : { withDatabase: together }),
      });
      held = await countObjects(zentrale);
    }
    return {
      dialect,
      targets: medians,
      withDatabase: Object.fromEntries([...withDb].map(([key, values]) => [key, median(values)])),
      readRatio: ratio('bare-read', 'read'),
      writeRatio: ratio('bare-write', 'write'),
      floors: {
        fastifyRead: ratio('bare-read', 'fastify-read'),
        fastifyWrite: ratio('bare-write', 'fastify-write'),
        dbRead: ratio('bare-read', 'db-read'),
        dbWrite: ratio('bare-write', 'db-write'),
      },
      ...(postgres
        ? {
            floorsWithDatabase: {
              dbRead: ratioWithDb('bare-read', 'db-read'),
              dbWrite: ratioWithDb('bare-write', 'db-write'),
            },
          }
        : {}),
      scale,
    };
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

/** The objects the bench user holds now (the node counts them). */
async function countObjects(zentrale: RunningServer): Promise<number> {
  return Number((await zentrale.child.request({ cmd: 'objects' })).objects);
}

export async function runObjectsBench(
  options: ObjectsOptions,
  log: (line: string) => void,
): Promise<DialectResult[]> {
  const results: DialectResult[] = [];
  for (const dialect of options.dialects) results.push(await runDialect(dialect, options, log));
  return results;
}

/** The goals set for the object path: by server CPU per request against bare node:http; write p99; flat writes. */
const GOAL = { read: 0.8, write: 0.5, p99Ms: 10, flat: 1.5 };

export function objectsSummary(results: DialectResult[], options: ObjectsOptions): string[] {
  const fixed = (value: number, digits = 0) => value.toFixed(digits);
  const met = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const lines = [
    '### objects: GET and POST /api/contact vs bare node:http doing the same JSON work',
    '',
    `autocannon: ${options.connections} connections, ${options.warmup} s warm-up + ${options.duration} s ` +
      `measured per target, ${options.rounds} rounds; medians. CPU: the server process ` +
      '(and, "with postgres", all of PostgreSQL\'s processes too).',
    '',
    '| database | target | req/s | p99 ms | CPU µs/request | with postgres µs/request |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const result of results) {
    for (const [key, m] of Object.entries(result.targets)) {
      const both = result.withDatabase[key];
      lines.push(
        `| ${result.dialect} | ${key} | ${fixed(m.requestsPerSecond)} | ${m.p99} | ${fixed(m.cpuPerRequest, 1)} | ` +
          `${both === undefined ? '' : fixed(both, 1)} |`,
      );
    }
  }
  lines.push(
    '',
    '| database | objects per user | write req/s | p99 ms | CPU µs/request | with postgres |',
    '|---|---:|---:|---:|---:|---:|',
  );
  for (const result of results)
    for (const step of result.scale)
      lines.push(
        `| ${result.dialect} | ${step.objects} | ${fixed(step.measurement.requestsPerSecond)} | ${step.measurement.p99} | ` +
          `${fixed(step.measurement.cpuPerRequest, 1)} | ${step.withDatabase === undefined ? '' : fixed(step.withDatabase, 1)} |`,
      );
  lines.push('');
  for (const result of results) {
    const costs = result.scale.map((step) => step.measurement.cpuPerRequest);
    const growth = costs.length > 1 ? Math.max(...costs) / Math.min(...costs) : 1;
    const worstP99 = Math.max(result.targets.write?.p99 ?? 0, ...result.scale.map((s) => s.measurement.p99));
    lines.push(
      `${result.dialect}: read ${fixed(result.readRatio, 3)} of bare node:http by CPU per request ` +
        `(goal ≥ ${GOAL.read}: ${met(result.readRatio >= GOAL.read)}), write ${fixed(result.writeRatio, 3)} ` +
        `(goal ≥ ${GOAL.write}: ${met(result.writeRatio >= GOAL.write)}); write cost from the smallest to the ` +
        `largest store ×${fixed(growth, 2)} (goal ≤ ${GOAL.flat}: ${met(growth <= GOAL.flat)}); write p99 ` +
        `${worstP99} ms (goal < ${GOAL.p99Ms}: ${met(worstP99 < GOAL.p99Ms)}).`,
    );
    const floor = result.floors;
    const withPg = result.floorsWithDatabase;
    lines.push(
      `${result.dialect} floors, the same ratio for servers that do only part of the work: plain Fastify ` +
        `read ${fixed(floor.fastifyRead, 3)}, write ${fixed(floor.fastifyWrite, 3)}; bare node:http with one ` +
        `${result.dialect} statement read ${fixed(floor.dbRead, 3)}, write ${fixed(floor.dbWrite, 3)}` +
        (withPg
          ? ` (with postgres's CPU: read ${fixed(withPg.dbRead, 3)}, write ${fixed(withPg.dbWrite, 3)})`
          : '') +
        '.',
    );
  }
  return lines;
}
