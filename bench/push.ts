/**
 * `npm run bench:push`: push delivery (performance: 1,000 pushes a second to the
 * local stand-ins over one HTTP/2 connection per service).
 *
 * A node on SQLite (or on PostgreSQL with DATABASE_URL set) with 250 users, each with one FCM
 * and one APNs registration; the stand-ins of test/push-services.ts (TLS, JWTs verified with
 * the public keys) answer every request 200.
 *
 *   steady  messages queued the way areas queue them (one write each, one user's 2 devices) at
 *           500 messages = 1,000 pushes a second, open loop, for DURATION seconds: the delivery
 *           rate reached, the latency from queueing to the stand-in's receipt (p50/p99/max), the
 *           connections opened per service
 *   burst   10,000 pushes queued at once (one write per 100 users): time until the last arrives
 *
 * Options (environment): DURATION (seconds, default 10), RATE (pushes a second, default 1000).
 */
import { fork } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { sleep } from './stats.js';

const DURATION = Number(process.env.DURATION ?? 10);
const RATE = Number(process.env.RATE ?? 1000);
const USERS = 250;
const APP_ID = 'ABCDE12345.com.example.bench';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

interface Report {
  latencies: number[];
  last: number;
  connections: Record<string, number>;
  failed: number;
}

/** The stand-ins in their own process (bench/push-stand-ins.ts). */
async function standIns() {
  const child = fork(path.join(import.meta.dirname, 'push-stand-ins.ts'), {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      BENCH_RSA_PUBLIC: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      BENCH_EC_PUBLIC: ec.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    },
  });
  const env = await new Promise<Record<string, string>>((resolve) =>
    child.once('message', (message: { env: Record<string, string> }) => resolve(message.env)),
  );
  const report = () =>
    new Promise<Report>((resolve) => {
      child.once('message', (message: Report) => resolve(message));
      child.send({ type: 'report' });
    });
  const close = () => new Promise((resolve) => child.once('exit', resolve).send({ type: 'close' }));
  return { env, report, close };
}

/** Waits until the stand-ins have received `count` pushes; answers their report. */
async function received(services: Awaited<ReturnType<typeof standIns>>, count: number): Promise<Report> {
  const all: number[] = [];
  let report: Report;
  do {
    await sleep(50);
    report = await services.report();
    all.push(...report.latencies);
  } while (all.length < count);
  return { ...report, latencies: all.sort((a, b) => a - b) };
}

/** The share of one core this process gets while busy (the machine may be shared): a 1 s busy loop. */
function cpuShare(): number {
  const before = process.cpuUsage();
  const start = Date.now();
  while (Date.now() - start < 1000) {}
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / (Date.now() - start);
}

async function main(): Promise<void> {
  console.log(
    `- CPU share a busy process gets on this machine now: ${(cpuShare() * 100).toFixed(0)}% of one core`,
  );
  const services = await standIns();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-push-'));
  const app = await buildApp(
    loadConfig({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      TELEPHONY: 'off',
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      ...services.env,
    }),
  );
  try {
    await app.services.pushFcmCredentials.setCredential(
      JSON.stringify({
        type: 'service_account',
        project_id: 'bench',
        private_key_id: 'benchkey',
        client_email: 'push@bench.iam.gserviceaccount.com',
        private_key: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }),
      }),
    );
    await app.services.pushApplications.addApplication({
      applicationId: APP_ID,
      teamId: 'TEAM123456',
      keyId: 'KEY1234567',
      privateKey: ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    });
    const users: string[] = [];
    for (let i = 0; i < USERS; i++) {
      const user = await app.services.users.createUser({
        username: `bench${i}`,
        password: 'secret-pw',
        firstname: 'B',
        lastname: 'P',
        email: `bench${i}@example.com`,
      });
      users.push(user.uuid);
      await app.services.push.changeRegistration(user.uuid, {
        system: 'fcm',
        action: 'add',
        device_token: `fcm-${i}`,
      });
      await app.services.push.changeRegistration(user.uuid, {
        system: 'apns',
        action: 'add',
        device_token: i.toString(16).padStart(64, '0'),
        application_id: APP_ID,
      });
    }
    const push = app.services.push;
    const message = (owner: string, id: string) => ({
      message: 'recording_new',
      owner,
      recording: id,
      phone: '+4930111',
      queued_at: Date.now(),
    });

    // ---- steady: RATE pushes a second, 2 per message, open loop in 10 ms ticks
    const messages = Math.round((RATE / 2) * DURATION);
    const cpuBefore = process.cpuUsage();
    const start = Date.now();
    let next = 0;
    const writes: Promise<unknown>[] = [];
    while (next < messages) {
      const due = Math.min(messages, Math.floor(((Date.now() - start) / 1000) * (RATE / 2)));
      for (; next < due; next++) {
        const owner = users[next % USERS] as string;
        writes.push(push.send([owner], () => message(owner, `s${next}`)));
      }
      await sleep(10);
    }
    await Promise.all(writes);
    const queuedEnd = Date.now();
    const steady = await received(services, messages * 2);
    const cpu = process.cpuUsage(cpuBefore);
    const pushes = messages * 2;
    const seconds = (steady.last - start) / 1000;
    const latencies = steady.latencies;
    const cpuMs = (cpu.user + cpu.system) / 1000;
    console.log('## steady');
    console.log(
      `- offered: ${pushes} pushes in ${((queuedEnd - start) / 1000).toFixed(2)} s (${RATE}/s target)`,
    );
    console.log(
      `- delivered: ${pushes} in ${seconds.toFixed(2)} s = ${Math.round(pushes / seconds)} pushes/s`,
    );
    console.log(
      `- latency queue -> stand-in: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${percentile(latencies, 100)} ms`,
    );
    console.log(
      `- connections opened: ${JSON.stringify(steady.connections)} (client pool: ${app.services.pushConnections.opened}); failed requests: ${steady.failed}`,
    );
    console.log(
      `- CPU of the node process (queueing, worker, HTTP/2 client; the load loop included): ${cpuMs.toFixed(0)} ms = ${(cpuMs / pushes).toFixed(3)} ms a push, ${((cpuMs / (steady.last - start)) * 100).toFixed(0)}% of one core over the phase`,
    );

    // ---- burst: 10,000 at once
    const burst = 5000;
    const burstStart = Date.now();
    const burstCpu = process.cpuUsage();
    const batches: Promise<unknown>[] = [];
    for (let i = 0; i < burst / USERS; i++)
      batches.push(push.send(users, (owner) => message(owner, `b${i}`)));
    await Promise.all(batches);
    const burstReport = await received(services, burst * 2);
    const burstSeconds = (burstReport.last - burstStart) / 1000;
    const burstCpuMs = (() => {
      const used = process.cpuUsage(burstCpu);
      return (used.user + used.system) / 1000;
    })();
    console.log('## burst');
    console.log(
      `- ${burst * 2} pushes queued at once (50 writes), all delivered in ${burstSeconds.toFixed(2)} s = ${Math.round((burst * 2) / burstSeconds)} pushes/s; CPU ${(burstCpuMs / (burst * 2)).toFixed(3)} ms a push`,
    );
    console.log(`- connections opened: ${JSON.stringify(burstReport.connections)}`);
    console.log(`- worker counts: ${JSON.stringify(app.services.pushDelivery.counts)}`);
    console.log(
      `- CPU share a busy process gets on this machine now: ${(cpuShare() * 100).toFixed(0)}% of one core`,
    );
  } finally {
    await app.close();
    await services.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
