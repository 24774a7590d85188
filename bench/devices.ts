/**
 * `npm run bench:devices`: connected devices long-polling tasks (spec "Device API";
 * targets: under 16 KB of server memory per connected device, a task reaches its device within
 * 100 ms p99). One Zentrale node (bench/devices-node.ts, SQLite) and one process of devices
 * (bench/devices-client.ts), each a child process of its own.
 *
 *   1. the node's RSS and V8 heap (after a full GC) before any device session exists;
 *   2. N device sessions (blocking time 1000 s), and N task polls held at once, one connection
 *      each; RSS and heap again: the growth per device;
 *   3. T license tasks to random devices, C at a time, through the task service (runTask):
 *      delivery latency (creation on the node to arrival at the device) and round trip
 *      (creation to the device's answer back at the caller);
 *   4. L real logins with the device key (POST /api/device/session, argon2id), 4 at a time.
 *
 * Options: --devices N (10000), --tasks T (2000), --concurrency C (20), --logins L (40).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startChild } from './child.js';
import { readRss } from './memory.js';
import { sleep } from './stats.js';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const devices = option('devices', 10_000);
const tasks = option('tasks', 2000);
const concurrency = option('concurrency', 20);
const logins = option('logins', 40);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-devices-'));
const port = await freePort();
const node = startChild('zentrale', './devices-node.ts', {
  DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
  PUBLIC_URL: `http://127.0.0.1:${port}`,
  LOG_LEVEL: 'silent',
  SESSION_RATE_LIMIT: '0',
  TELEPHONY: 'off',
  DATABASE_URL: '',
});
const client = startChild('devices', './devices-client.ts');
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;

try {
  await Promise.all([node.ready, client.ready]);
  const before = (await node.request({ cmd: 'memory' })) as { heap: { heapUsed: number } };
  const rssBefore = readRss(node.pid);

  const setup = (await node.request({ cmd: 'setup', count: devices })) as { sids: string[]; seconds: number };
  console.log(`${devices} device sessions opened in ${setup.seconds.toFixed(1)} s`);
  await client.request({ cmd: 'start', port, sids: setup.sids });
  for (;;) {
    const { held } = (await node.request({ cmd: 'held' })) as { held: number };
    if (held >= devices) break;
    await sleep(200);
  }
  const after = (await node.request({ cmd: 'memory' })) as { heap: { heapUsed: number }; held: number };
  const rssAfter = readRss(node.pid);
  const rssPer = (rssAfter - rssBefore) / devices;
  const heapPer = (after.heap.heapUsed - before.heap.heapUsed) / devices;
  console.log(
    `memory: RSS ${mb(rssBefore)} -> ${mb(rssAfter)} (${kb(rssPer)} per device), ` +
      `heap ${mb(before.heap.heapUsed)} -> ${mb(after.heap.heapUsed)} (${kb(heapPer)} per device), ` +
      `${after.held} task polls held`,
  );

  const run = (await node.request({ cmd: 'tasks', count: tasks, concurrency })) as {
    roundTrips: number[];
    failed: number;
  };
  await sleep(200);
  const { latencies, errors, kinds } = (await client.request({ cmd: 'collect' })) as {
    latencies: number[];
    errors: number;
    kinds: Record<string, number>;
  };
  if (errors > 0) console.log(`client errors by kind: ${JSON.stringify(kinds)}`);
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  console.log(
    `tasks: ${tasks} (${concurrency} at a time, ${run.failed} failed, ${errors} client errors); delivery ` +
      `p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, max ` +
      `${ms(percentile(latencies, 100))}; round trip p50 ${ms(percentile(run.roundTrips, 50))}, p99 ` +
      `${ms(percentile(run.roundTrips, 99))}`,
  );

  if (logins > 0) {
    const made = (await node.request({ cmd: 'loginDevices', count: logins })) as {
      devices: string[];
      key: string;
    };
    const { times } = (await client.request({
      cmd: 'logins',
      port,
      devices: made.devices,
      key: made.key,
      concurrency: 4,
    })) as { times: number[] };
    console.log(
      `logins (argon2id key check): ${logins}, 4 at a time: p50 ${ms(percentile(times, 50))}, p99 ${ms(percentile(times, 99))}`,
    );
  }
  const verdict = rssPer < 16 * 1024 && percentile(latencies, 99) < 100;
  console.log(`targets (RSS < 16 KB per device, delivery p99 < 100 ms): ${verdict ? 'met' : 'NOT met'}`);
} finally {
  await client.stop();
  await node.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
