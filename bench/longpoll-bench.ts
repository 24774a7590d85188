/**
 * Benchmark (b): `polls` idle long-polls (GET /api/event?timeout=300, one per session, all
 * sessions of one user) held at once by one Zentrale node, and the server memory they cost:
 * RSS growth (VmRSS of /proc/<pid>/status) and V8 heap growth after a full GC, from before the
 * polls are opened to when all are held. Then one event to that user, and the time from the
 * emit to the end of the last client's answer. A bare node:http server holding as many pending
 * requests, released at once, is measured the same way beside it. The clients run in their
 * own process. The sessions are logged in once; every round restarts the servers as fresh
 * processes (the Zentrale node reloads the saved sessions), so no round inherits another's heap.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ChildHandle, startChild } from './child.js';
import { type HeapReport, readRss } from './memory.js';
import { type RunningServer, startReference, startZentrale } from './servers.js';
import { median, sleep } from './stats.js';

export interface LongPollOptions {
  polls: number;
  rounds: number;
  /** Parallel logins while creating the sessions. */
  loginConcurrency: number;
  /** When set, a CPU profile of the Zentrale node from the emit to the last answer goes here. */
  profileDir?: string | undefined;
}

export interface HoldMeasurement {
  rssBefore: number;
  rssAfter: number;
  heapBefore: HeapReport;
  heapAfter: HeapReport;
  /** Bytes per held poll. */
  rssPerPoll: number;
  heapPerPoll: number;
  externalPerPoll: number;
  /** Milliseconds from the emit (or release) to the end of the last client's answer. */
  deliveryMs: number;
  /** Milliseconds the emit (or release) call itself took in the server. */
  emitMs: number;
  /** Milliseconds from the emit until the server had handed the last answer to the kernel. */
  serverMs: number;
  delivered: number;
  failed: number;
  openSeconds: number;
}

export interface LongPollRound {
  loginSeconds: number;
  zentrale: HoldMeasurement;
  bare: HoldMeasurement;
}

export interface LongPollResult {
  options: LongPollOptions;
  rounds: LongPollRound[];
  median: { zentrale: HoldMeasurement; bare: HoldMeasurement; loginSeconds: number };
}

interface Collected {
  answered: number;
  delivered: number;
  failed: number;
  first: number;
  last: number;
  [field: string]: unknown;
}

async function waitForPending(server: RunningServer, count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { pending } = await server.child.request<{ pending: number }>({ cmd: 'pending' });
    if (pending === count) return;
    if (Date.now() > deadline) throw new Error(`${server.child.name} holds ${pending} of ${count} requests`);
    await sleep(200);
  }
}

async function memory(server: RunningServer): Promise<{ rss: number; heap: HeapReport }> {
  const heap = await server.child.request<HeapReport>({ cmd: 'memory' });
  return { rss: readRss(server.child.pid), heap };
}

/** Opens the polls, measures memory around them, then fires `trigger` and waits for all answers. */
async function holdAndRelease(
  server: RunningServer,
  client: ChildHandle,
  options: LongPollOptions,
  request: { path: string; bearer: boolean },
  trigger: () => Promise<{ start: number; returned: number }>,
): Promise<HoldMeasurement> {
  await sleep(1000);
  const before = await memory(server);
  const opened = await client.request<{ seconds: number }>({
    cmd: 'open',
    port: server.port,
    count: options.polls,
    ...request,
  });
  await waitForPending(server, options.polls, 120_000);
  // Let the last requests reach their wait before measuring.
  await sleep(2000);
  const after = await memory(server);
  const { start, returned } = await trigger();
  const collected = await client.request<Collected>({ cmd: 'collect', timeoutMs: 60_000 });
  const { lastWritten } = await server.child.request<{ lastWritten: number }>({ cmd: 'pending' });
  const polls = options.polls;
  return {
    rssBefore: before.rss,
    rssAfter: after.rss,
    heapBefore: before.heap,
    heapAfter: after.heap,
    rssPerPoll: (after.rss - before.rss) / polls,
    heapPerPoll: (after.heap.heapUsed - before.heap.heapUsed) / polls,
    externalPerPoll: (after.heap.external - before.heap.external) / polls,
    deliveryMs: collected.last - start,
    emitMs: returned - start,
    serverMs: lastWritten - start,
    delivered: collected.delivered,
    failed: collected.failed,
    openSeconds: opened.seconds,
  };
}

/** Where the sessions live between rounds: one DATA_DIR, one PUBLIC_URL, one user. */
interface SessionStore {
  dataDir: string;
  env: Record<string, string>;
  loginSeconds: number;
}

/**
 * Logs the sessions in once, through HTTP, on a node that is then stopped: its sessions are
 * saved in DATA_DIR. Every round restarts a node on them, so the memory baseline is taken in a
 * process that never ran the password hashing of the logins (argon2id leaves tens of MB of
 * freed but resident malloc arenas behind, which the polls would then quietly reuse).
 */
async function createSessions(
  client: ChildHandle,
  options: LongPollOptions,
  log: (line: string) => void,
): Promise<SessionStore> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-sessions-'));
  const env: Record<string, string> = { PUBLIC_URL: 'http://zentrale-bench.invalid' };
  const node = await startZentrale({ dataDir, env });
  try {
    log(`logging in ${options.polls} sessions of one user (POST /api/session)...`);
    const login = await client.request<{ sessions: number; seconds: number }>({
      cmd: 'login',
      port: node.port,
      username: node.info.username,
      password: node.info.password,
      count: options.polls,
      concurrency: options.loginConcurrency,
    });
    log(`  ${login.sessions} sessions in ${login.seconds.toFixed(1)} s`);
    return { dataDir, env: { ...env, BENCH_USER_UUID: String(node.info.user) }, loginSeconds: login.seconds };
  } finally {
    await node.stop();
  }
}

async function runRound(
  client: ChildHandle,
  store: SessionStore,
  options: LongPollOptions,
  round: number,
): Promise<{ zentrale: HoldMeasurement; bare: HoldMeasurement }> {
  const running: RunningServer[] = [];
  try {
    const zentrale = await startZentrale({ dataDir: store.dataDir, env: store.env });
    running.push(zentrale);
    const { sessions } = await zentrale.child.request<{ sessions: number }>({ cmd: 'pending' });
    if (sessions < options.polls) throw new Error(`the restarted node holds only ${sessions} sessions`);
    const z = await holdAndRelease(
      zentrale,
      client,
      options,
      { path: '/api/event?timeout=300', bearer: true },
      async () => {
        if (options.profileDir) await zentrale.child.request({ cmd: 'profile-start' });
        return zentrale.child.request({ cmd: 'emit', n: 1 });
      },
    );
    if (options.profileDir) {
      const file = path.join(options.profileDir, `longpoll-delivery-${round}.cpuprofile`);
      await zentrale.child.request({ cmd: 'profile-stop', file });
    }
    await zentrale.stop();
    running.pop();

    const bare = await startReference('node-http-hold');
    running.push(bare);
    const b = await holdAndRelease(bare, client, options, { path: '/', bearer: false }, () =>
      bare.child.request({ cmd: 'release' }),
    );
    return { zentrale: z, bare: b };
  } finally {
    for (const server of running) await server.stop();
  }
}

function medianOf(measurements: HoldMeasurement[]): HoldMeasurement {
  const pick = (select: (m: HoldMeasurement) => number) => median(measurements.map(select));
  const heap = (select: (m: HoldMeasurement) => HeapReport) => ({
    heapUsed: pick((m) => select(m).heapUsed),
    heapTotal: pick((m) => select(m).heapTotal),
    external: pick((m) => select(m).external),
    arrayBuffers: pick((m) => select(m).arrayBuffers),
  });
  return {
    rssBefore: pick((m) => m.rssBefore),
    rssAfter: pick((m) => m.rssAfter),
    heapBefore: heap((m) => m.heapBefore),
    heapAfter: heap((m) => m.heapAfter),
    rssPerPoll: pick((m) => m.rssPerPoll),
    heapPerPoll: pick((m) => m.heapPerPoll),
    externalPerPoll: pick((m) => m.externalPerPoll),
    deliveryMs: pick((m) => m.deliveryMs),
    emitMs: pick((m) => m.emitMs),
    serverMs: pick((m) => m.serverMs),
    delivered: Math.min(...measurements.map((m) => m.delivered)),
    failed: Math.max(...measurements.map((m) => m.failed)),
    openSeconds: pick((m) => m.openSeconds),
  };
}

function describe(name: string, m: HoldMeasurement): string {
  return (
    `  ${name}: RSS +${((m.rssAfter - m.rssBefore) / 1048576).toFixed(1)} MB ` +
    `(${(m.rssPerPoll / 1024).toFixed(2)} KB/poll), heap +${(m.heapPerPoll / 1024).toFixed(2)} KB/poll, ` +
    `external +${(m.externalPerPoll / 1024).toFixed(2)} KB/poll; delivered ${m.delivered}, failed ${m.failed}, ` +
    `last answer ${m.deliveryMs.toFixed(0)} ms after the emit (emit call ${m.emitMs.toFixed(0)} ms, ` +
    `server wrote the last answer at ${m.serverMs.toFixed(0)} ms)`
  );
}

export async function runLongPollBench(
  options: LongPollOptions,
  log: (line: string) => void,
): Promise<LongPollResult> {
  const rounds: LongPollRound[] = [];
  const client = startChild('long-poll client', './longpoll-client.ts');
  let store: SessionStore | undefined;
  try {
    await client.ready;
    store = await createSessions(client, options, log);
    for (let round = 1; round <= options.rounds; round += 1) {
      log(`round ${round}/${options.rounds}`);
      const result = await runRound(client, store, options, round);
      log(describe('Zentrale', result.zentrale));
      log(describe('bare node:http', result.bare));
      rounds.push({ ...result, loginSeconds: store.loginSeconds });
    }
  } finally {
    await client.stop();
    if (store) fs.rmSync(store.dataDir, { recursive: true, force: true });
  }
  return {
    options,
    rounds,
    median: {
      zentrale: medianOf(rounds.map((r) => r.zentrale)),
      bare: medianOf(rounds.map((r) => r.bare)),
      loginSeconds: median(rounds.map((r) => r.loginSeconds)),
    },
  };
}
