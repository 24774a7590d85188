/**
 * `npm run bench:push`: push delivery (issue 19 "Performance": 1,000 pushes a second to the
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
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { PushStandIns, type RecordedRequest } from '../test/push-services.js';
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

async function main(): Promise<void> {
  const services = await new PushStandIns({
    fcm: { projectId: 'bench', clientEmail: 'push@bench.iam.gserviceaccount.com', publicKey: rsa.publicKey },
    apnsKeys: new Map([['KEY1234567', { teamId: 'TEAM123456', publicKey: ec.publicKey }]]),
    record: false,
  }).start();
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
  const arrivals = new Map<string, number>();
  services.on('request', (request: RecordedRequest) => {
    if (request.service === 'oauth') return;
    const body = JSON.parse(request.body) as {
      recording?: string;
      message?: { data?: { recording?: string } };
    };
    const id = body.recording ?? body.message?.data?.recording;
    if (id) arrivals.set(`${request.service === 'fcm' ? 'f' : 'a'}${id}`, performance.now());
  });
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

    // ---- steady: RATE pushes a second, 2 per message, open loop in 10 ms ticks
    const messages = Math.round((RATE / 2) * DURATION);
    const queuedAt = new Map<string, number>();
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    let next = 0;
    const writes: Promise<unknown>[] = [];
    while (next < messages) {
      const due = Math.min(messages, Math.floor(((performance.now() - start) / 1000) * (RATE / 2)));
      for (; next < due; next++) {
        const id = `s${next}`;
        queuedAt.set(id, performance.now());
        writes.push(
          push.send([users[next % USERS] as string], (owner) => ({
            message: 'recording_new',
            owner,
            recording: id,
            phone: '+4930111',
          })),
        );
      }
      await sleep(10);
    }
    await Promise.all(writes);
    const queuedEnd = performance.now();
    while ([...queuedAt.keys()].some((id) => !arrivals.has(`f${id}`) || !arrivals.has(`a${id}`)))
      await sleep(20);
    const end = Math.max(...[...arrivals.values()]);
    const cpu = process.cpuUsage(cpuBefore);
    const latencies = [...queuedAt]
      .flatMap(([id, at]) => [
        (arrivals.get(`f${id}`) as number) - at,
        (arrivals.get(`a${id}`) as number) - at,
      ])
      .sort((a, b) => a - b);
    const pushes = messages * 2;
    const seconds = (end - start) / 1000;
    console.log('## steady');
    console.log(
      `- offered: ${pushes} pushes in ${((queuedEnd - start) / 1000).toFixed(2)} s (${RATE}/s target)`,
    );
    console.log(
      `- delivered: ${pushes} in ${seconds.toFixed(2)} s = ${Math.round(pushes / seconds)} pushes/s`,
    );
    console.log(
      `- latency queue -> stand-in: p1 ${percentile(latencies, 1).toFixed(1)} ms, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${percentile(latencies, 100).toFixed(1)} ms`,
    );
    console.log(
      `- connections opened: ${JSON.stringify(services.connections)} (client pool: ${app.services.pushConnections.opened})`,
    );
    console.log(
      `- CPU of the process (node, its queue, the stand-ins and this load generator): ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms = ${(((cpu.user + cpu.system) / 1000 / (end - start)) * 100).toFixed(0)}% of one core over the phase`,
    );

    // ---- burst: 10,000 at once
    arrivals.clear();
    const burst = 5000;
    const burstStart = performance.now();
    const batches: Promise<unknown>[] = [];
    for (let i = 0; i < burst / USERS; i++)
      batches.push(
        push.send(users, (owner) => ({
          message: 'recording_new',
          owner,
          recording: `b${i}-${owner}`,
          phone: '+4930111',
        })),
      );
    await Promise.all(batches);
    while (arrivals.size < burst * 2) await sleep(20);
    const burstSeconds = (Math.max(...arrivals.values()) - burstStart) / 1000;
    console.log('## burst');
    console.log(
      `- ${burst * 2} pushes queued at once, all delivered in ${burstSeconds.toFixed(2)} s = ${Math.round((burst * 2) / burstSeconds)} pushes/s`,
    );
    console.log(`- connections opened: ${JSON.stringify(services.connections)}`);
    console.log(`- worker counts: ${JSON.stringify(app.services.pushDelivery.counts)}`);
  } finally {
    await app.close();
    await services.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
