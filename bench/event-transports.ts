/**
 * Benchmark of the event transports (decisions.md "Event transports"): one event to N sessions
 * of one user, each holding a WebSocket, against the same N sessions each holding a long-poll
 * (time from the emit to the last client's receipt); then webhook delivery latency under load
 * (U users with a subscription each to a local receiver, E events each emitted in bursts; p50
 * and p99 from the emit to the receiver). The node runs in this process on SQLite; the clients
 * and the receiver run in their own process. `npm run bench:events -- [N] [U] [E]`.
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';

const connections = Number(process.argv[2] ?? 10_000);
const users = Number(process.argv[3] ?? 100);
const eventsPerUser = Number(process.argv[4] ?? 20);

const client = fork(path.join(import.meta.dirname, 'event-transports-client.ts'), {
  execArgv: ['--import', 'tsx'],
});
function ask<T>(message: unknown): Promise<T> {
  return new Promise((resolve) => {
    client.once('message', (answer) => resolve(answer as T));
    client.send(message as object);
  });
}
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-events-'));
const app = await buildApp(
  loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://127.0.0.1:8080',
    SESSION_RATE_LIMIT: '0',
    TELEPHONY: 'off',
    WEBHOOK_PRIVATE_URLS: 'on',
  }),
);
try {
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.server.address() as AddressInfo).port;
  const { users: userService, sessions } = app.services;
  const user = await userService.createUser({
    username: 'benchuser',
    password: 'bench-password',
    firstname: 'B',
    lastname: 'B',
    email: 'bench@example.com',
  });
  const sids: string[] = [];
  for (let i = 0; i < connections; i++) {
    const session = await sessions.createSession({ address: '127.0.0.1', origin: null, language: 'en' });
    await sessions.authenticateUser(session, user.uuid);
    sids.push(session.sid);
  }
  console.log(`${connections} sessions of one user`);
  const queues = sids.map((sid) => sessions.findBySid(sid)!.queue);

  const results: Record<string, number[]> = { websocket: [], longpoll: [] };
  for (let round = 0; round < 3; round++) {
    const opened = await ask<{ open: number; failed: number }>({ cmd: 'ws', port, sids });
    if (opened.failed > 0) throw new Error(`${opened.failed} WebSockets failed to open`);
    let start = Date.now();
    app.services.hub.emit({ users: [user.uuid] }, 'user_modify', { round });
    let { last } = await ask<{ last: number }>({ cmd: 'collect', count: connections });
    results.websocket!.push(last - start);
    await ask({ cmd: 'close' });
    await pause(500);

    await ask({ cmd: 'poll', port, sids });
    while (queues.some((queue) => queue.waiting === 0)) await pause(20);
    start = Date.now();
    app.services.hub.emit({ users: [user.uuid] }, 'user_modify', { round });
    ({ last } = await ask<{ last: number }>({ cmd: 'collect', count: connections }));
    results.longpoll!.push(last - start);
    await pause(500);
  }
  for (const [name, values] of Object.entries(results))
    console.log(
      `one event to ${connections} ${name} clients: ${values.map((v) => `${v} ms`).join(', ')} (median ${percentile(values, 50)} ms)`,
    );

  const { port: receiverPort } = await ask<{ port: number }>({ cmd: 'receiver' });
  const owners: string[] = [];
  for (let i = 0; i < users; i++) {
    const owner = await userService.createUser({
      username: `hookuser${i}`,
      password: 'bench-password',
      firstname: 'H',
      lastname: 'H',
      email: `hook${i}@example.com`,
    });
    await app.services.webhooks.create(
      owner.uuid,
      `http://127.0.0.1:${receiverPort}/hook`,
      undefined,
      undefined,
    );
    owners.push(owner.uuid);
  }
  const total = users * eventsPerUser;
  const began = Date.now();
  for (let e = 0; e < eventsPerUser; e++) {
    for (const owner of owners)
      app.services.hub.emit({ users: [owner] }, 'user_modify', { sent: Date.now() });
    await pause(10);
  }
  const { latencies } = await ask<{ latencies: number[] }>({ cmd: 'latencies', count: total });
  const seconds = (Date.now() - began) / 1000;
  console.log(
    `webhooks: ${total} deliveries to ${users} subscriptions in ${seconds.toFixed(1)} s ` +
      `(${(total / seconds).toFixed(0)}/s): p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${percentile(latencies, 100)} ms`,
  );
} finally {
  client.kill();
  await app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
