/**
 * Benchmark of live collaboration (`npm run bench:live`; docs/benchmarks.md "Live
 * collaboration"). One Zentrale node runs in a child process (SQLite in a temporary DATA_DIR, or
 * the PostgreSQL of DATABASE_URL); the clients run in this process over keep-alive HTTP.
 *
 * (1) Presentation: `--members` users (default 1000) subscribe to one presentation, join it and
 *     each hold a long-poll (GET /api/event); the moderator changes the page `--rounds` times.
 *     Measured per round: the time from sending the page control to each member's long-poll
 *     answer carrying the new page. Target: the last member within 1 s.
 * (2) Chat: `--participants` users (default 100) in one chat, each holding a long-poll; they send
 *     `--rate` messages per second (default 100) for `--seconds` seconds, round robin. Measured:
 *     the send rate reached, every message reaching every participant, and the time from sending
 *     a message to each participant's long-poll answer carrying it.
 *
 * Users and sessions are made in the server process through the services (password hashing of
 * a thousand logins is not what is measured); every measured step goes through HTTP.
 */

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { announceReady, serveCommands, startChild } from './child.js';
import { sleep } from './stats.js';

interface Options {
  members: number;
  rounds: number;
  participants: number;
  rate: number;
  seconds: number;
}

function readOptions(argv: readonly string[]): Options {
  const options: Options = { members: 1000, rounds: 60, participants: 100, rate: 100, seconds: 5 };
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!.replace(/^--/, '') as keyof Options;
    if (!(name in options)) throw new Error(`unknown option ${argv[i]}`);
    const value = Number(argv[++i]);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a positive whole number`);
    options[name] = value;
  }
  return options;
}

// ------------------------------------------------------------------ server process

interface Setup {
  port: number;
  presentation: string;
  pageCount: number;
  moderatorSid: string;
  memberSids: string[];
  chat: string;
  chatSids: string[];
}

async function runServer(): Promise<void> {
  const config = loadConfig();
  const app = await buildApp(config);
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.server.address() as { port: number }).port;
  const { services } = app;

  async function makeUsers(count: number, prefix: string): Promise<string[]> {
    const uuids: string[] = new Array(count);
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const index = next++;
        const user = await services.users.createUser({
          username: `${prefix}${index}`,
          password: 'bench-password',
          firstname: 'Bench',
          lastname: `${prefix}${index}`,
        });
        uuids[index] = user.uuid;
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return uuids;
  }

  async function sessionOf(user: string): Promise<string> {
    const session = await services.sessions.createSession({
      address: '127.0.0.1',
      origin: null,
      language: 'en',
    });
    await services.sessions.authenticateUser(session, user);
    return session.sid;
  }

  async function makePdf(pages: number): Promise<Buffer> {
    const { PDFDocument, StandardFonts } = await import('pdf-lib');
    const document = await PDFDocument.create();
    const font = await document.embedFont(StandardFonts.Helvetica);
    for (let index = 1; index <= pages; index++) {
      document.addPage([800, 600]).drawText(`Slide ${index}`, { x: 80, y: 300, size: 48, font });
    }
    return Buffer.from(await document.save());
  }

  serveCommands(
    {
      setup: async (command) => {
        const members = Number(command.members);
        const participants = Number(command.participants);
        const started = Date.now();
        const [presenter] = await makeUsers(1, 'presenter');
        const users = await makeUsers(Math.max(members, participants), 'member');
        const { store, presentations, chats } = services;

        // The presentation, with slides, readable by every member through one tag.
        const presentation = await presentations.createPresentation(presenter!, { description: 'bench' });
        const pageCount = 4;
        await presentations.uploadPdf(presenter!, presentation, Readable.from(await makePdf(pageCount)));
        await services.content.idle();
        const policy = Object.fromEntries(users.slice(0, members).map((user) => [user, 1]));
        await store.write(async (w) => {
          const tag = await store.createTag(w, presenter!, { label: 'audience', policy, foreignUse: false });
          const found = await store.getForRead(w.trx, presenter!, presentation);
          await store.addOwnerTags(w, found.row, [tag]);
        });

        // The chat: its creator is linked with the others and adds them.
        const talkers = users.slice(0, participants);
        const chat = await chats.createChat(talkers[0]!, { description: 'bench' });
        for (const other of talkers.slice(1))
          await store.write((w) => store.linkUsers(w, talkers[0]!, other));
        await chats.updateParticipants(talkers[0]!, chat, { add: talkers.slice(1) });

        const moderatorSid = await sessionOf(presenter!);
        const memberSids: string[] = [];
        for (const user of users.slice(0, members)) memberSids.push(await sessionOf(user));
        const chatSids: string[] = [];
        for (const user of talkers) chatSids.push(await sessionOf(user));
        process.stderr.write(`  setup took ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
        const setup: Setup = { port, presentation, pageCount, moderatorSid, memberSids, chat, chatSids };
        return { ...setup };
      },
    },
    () => app.close(),
  );
  announceReady({ port });
}

// ------------------------------------------------------------------ clients

const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

interface Answer {
  status: string;
  [field: string]: unknown;
}

interface Event {
  id: number;
  event: string;
  [field: string]: unknown;
}

/** Transport failures seen (a reused keep-alive socket the server had just closed); retried. */
let transportErrors = 0;

/** One call; a transport failure is retried once on a fresh connection. */
async function call(port: number, sid: string, method: string, url: string, body?: unknown): Promise<Answer> {
  try {
    return await send(port, sid, method, url, body);
  } catch {
    transportErrors += 1;
    return send(port, sid, method, url, body);
  }
}

function send(port: number, sid: string, method: string, url: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: url,
        agent,
        headers: {
          authorization: `Bearer ${sid}`,
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer);
          } catch (error) {
            reject(error);
          }
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

async function ok(port: number, sid: string, method: string, url: string, body?: unknown): Promise<Answer> {
  const answer = await call(port, sid, method, url, body);
  if (answer.status !== 'ok')
    throw new Error(`${method} ${url}: ${answer.status} ${String(answer.message ?? '')}`);
  return answer;
}

/** A session holding GET /api/event long-polls one after the other until stopped. */
class Listener {
  private next = 0;
  private stopped = false;
  polls = 0;

  constructor(
    private readonly port: number,
    readonly sid: string,
    private readonly onEvent: (event: Event, at: number) => void,
  ) {}

  start(): Promise<void> {
    return this.loop();
  }

  stop(): void {
    this.stopped = true;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const answer = await call(this.port, this.sid, 'GET', `/api/event?next=${this.next}&timeout=20`).catch(
        (error: unknown) => ({ status: `transport: ${String(error)}`, event: [] }) as Answer,
      );
      if (answer.status.startsWith('transport')) {
        await sleep(50);
        continue;
      }
      const at = performance.now();
      this.polls += 1;
      if (answer.status !== 'ok') throw new Error(`event poll: ${answer.status}`);
      for (const event of answer.event as Event[]) {
        this.next = Math.max(this.next, event.id + 1);
        this.onEvent(event, at);
      }
    }
  }
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const ms = (value: number) => value.toFixed(1);

async function presentationBench(setup: Setup, options: Options): Promise<Record<string, unknown>> {
  const { port, presentation, moderatorSid, memberSids } = setup;
  const base = `/api/presentation/${presentation}`;
  await ok(port, moderatorSid, 'POST', `${base}/control`, { control: 'start' });

  let round: { page: number; t0: number; latencies: Map<string, number> } | undefined;
  // Members that have seen the status listing every member and the moderator (the end of the join wave).
  const caughtUp = new Set<string>();
  let keepalives = 0;
  const listeners = memberSids.map(
    (sid) =>
      new Listener(port, sid, (event, at) => {
        if (event.event === 'presentation_keepalive') {
          keepalives += 1;
          call(port, sid, 'POST', `${base}/control`, { control: 'keepalive' }).catch(() => {});
          return;
        }
        if (event.event === 'presentation_status' && event.member_count === memberSids.length + 1) {
          caughtUp.add(sid);
        }
        if (event.event !== 'presentation_status' || !round || event.page !== round.page) return;
        if (!round.latencies.has(sid)) round.latencies.set(sid, at - round.t0);
      }),
  );
  // The moderator answers keepalive requests too.
  listeners.push(
    new Listener(port, moderatorSid, (event) => {
      if (event.event === 'presentation_keepalive') {
        call(port, moderatorSid, 'POST', `${base}/control`, { control: 'keepalive' }).catch(() => {});
      }
    }),
  );
  const joinStarted = performance.now();
  for (let i = 0; i < memberSids.length; i += 50) {
    await Promise.all(
      memberSids.slice(i, i + 50).map(async (sid) => {
        await ok(port, sid, 'GET', `${base}/event`);
        await ok(port, sid, 'POST', `${base}/control`, { control: 'join' });
      }),
    );
  }
  const joinSeconds = (performance.now() - joinStarted) / 1000;
  const loops = listeners.map((listener) => listener.start());
  // Every member has read its backlog and waits in a fresh long-poll.
  const settleStarted = performance.now();
  while (caughtUp.size < memberSids.length && performance.now() - settleStarted < 60_000) await sleep(20);
  const settleSeconds = (performance.now() - settleStarted) / 1000;
  await sleep(500);

  const rounds: { lastMs: number; p50Ms: number; p95Ms: number; received: number }[] = [];
  for (let r = 0; r < options.rounds; r++) {
    const page = r % 2 === 0 ? 2 : 1;
    round = { page, t0: performance.now(), latencies: new Map() };
    await ok(port, moderatorSid, 'POST', `${base}/control`, { control: 'page', page });
    const deadline = performance.now() + 10_000;
    while (round.latencies.size < memberSids.length && performance.now() < deadline) await sleep(5);
    const values = [...round.latencies.values()];
    rounds.push({
      lastMs: Math.max(...values),
      p50Ms: percentile(values, 50),
      p95Ms: percentile(values, 95),
      received: values.length,
    });
    await sleep(300);
  }
  round = undefined;
  for (const listener of listeners) listener.stop();
  await ok(port, moderatorSid, 'POST', `${base}/control`, { control: 'stop' });
  await Promise.race([Promise.allSettled(loops), sleep(25_000)]);

  const worst = Math.max(...rounds.map((r) => r.lastMs));
  const complete = rounds.every((r) => r.received === memberSids.length);
  console.log(`\n(1) presentation: ${memberSids.length} members, ${options.rounds} page changes`);
  console.log(
    `  join of all members: ${joinSeconds.toFixed(1)} s; all members had the full member list ` +
      `${settleSeconds.toFixed(1)} s after the long-polls started (${caughtUp.size} of ${memberSids.length})`,
  );
  console.log(`  keepalive requests answered during the run: ${keepalives}`);
  console.log('  round  last member ms  p50 ms  p95 ms  received');
  rounds.forEach((r, i) => {
    console.log(
      `  ${String(i + 1).padStart(5)}  ${ms(r.lastMs).padStart(14)}  ${ms(r.p50Ms).padStart(6)}  ${ms(r.p95Ms).padStart(6)}  ${r.received}`,
    );
  });
  const medianLast = percentile(
    rounds.map((r) => r.lastMs),
    50,
  );
  const met = complete && worst < 1000;
  console.log(
    `  last member: median ${ms(medianLast)} ms, worst ${ms(worst)} ms; target < 1000 ms: ${met ? 'met' : 'NOT met'}`,
  );
  return {
    members: memberSids.length,
    joinSeconds,
    settleSeconds,
    keepalives,
    rounds,
    medianLastMs: medianLast,
    worstLastMs: worst,
    complete,
    met,
  };
}

async function chatBench(setup: Setup, options: Options): Promise<Record<string, unknown>> {
  const { port, chat, chatSids } = setup;
  const total = options.rate * options.seconds;
  const sentAt: number[] = new Array(total);
  const latencies: number[] = [];
  const received = new Array<number>(total).fill(0);
  const listeners = chatSids.map(
    (sid) =>
      new Listener(port, sid, (event, at) => {
        if (event.event !== 'chat_message' || event.chat !== chat) return;
        const index = Number(/^bench (\d+)$/.exec(String(event.text))?.[1]);
        if (!Number.isInteger(index) || sentAt[index] === undefined) return;
        received[index]! += 1;
        latencies.push(at - sentAt[index]!);
      }),
  );
  const loops = listeners.map((listener) => listener.start());
  await sleep(1500);

  const interval = 1000 / options.rate;
  const started = performance.now();
  const sends: Promise<unknown>[] = [];
  let failures = 0;
  for (let index = 0; index < total; index++) {
    const due = started + index * interval;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const sid = chatSids[index % chatSids.length]!;
    sentAt[index] = performance.now();
    sends.push(
      call(port, sid, 'POST', `/api/chat/${chat}/message`, { text: `bench ${index}` }).then((answer) => {
        if (answer.status !== 'ok') failures += 1;
      }),
    );
  }
  await Promise.all(sends);
  const sendSeconds = (performance.now() - started) / 1000;
  const expected = total * chatSids.length;
  const deadline = performance.now() + 15_000;
  while (latencies.length < expected && performance.now() < deadline) await sleep(20);
  const deliverySeconds = (performance.now() - started) / 1000;
  for (const listener of listeners) listener.stop();
  // A last message answers the waiting long-polls.
  await call(port, chatSids[0]!, 'POST', `/api/chat/${chat}/message`, { text: 'done' });
  await Promise.race([Promise.allSettled(loops), sleep(25_000)]);

  const rate = total / sendSeconds;
  const p99 = percentile(latencies, 99);
  const met = failures === 0 && latencies.length === expected && rate >= options.rate * 0.95 && p99 < 1000;
  console.log(`\n(2) chat: ${chatSids.length} participants, ${total} messages at ${options.rate}/s`);
  console.log(
    `  sent: ${total} in ${sendSeconds.toFixed(2)} s = ${rate.toFixed(1)} messages/s, ${failures} failed`,
  );
  console.log(
    `  delivered: ${latencies.length} of ${expected} (${received.filter((n) => n === chatSids.length).length} messages ` +
      `reached everyone) within ${deliverySeconds.toFixed(2)} s = ${(latencies.length / deliverySeconds).toFixed(0)} events/s`,
  );
  console.log(
    `  send to long-poll answer: p50 ${ms(percentile(latencies, 50))} ms, p95 ${ms(percentile(latencies, 95))} ms, ` +
      `p99 ${ms(p99)} ms, max ${ms(Math.max(...latencies))} ms`,
  );
  console.log(`  target (all delivered, >= ${options.rate}/s, p99 < 1000 ms): ${met ? 'met' : 'NOT met'}`);
  return {
    participants: chatSids.length,
    messages: total,
    sendRate: rate,
    failures,
    delivered: latencies.length,
    expected,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    p99Ms: p99,
    maxMs: Math.max(...latencies),
    met,
  };
}

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-live-'));
  const database = process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'SQLite';
  console.log(
    `Live collaboration benchmark: ${database}, node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? ''})`,
  );
  const server = startChild('zentrale', './live.ts', {
    BENCH_LIVE_ROLE: 'server',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SESSION_RATE_LIMIT: '0',
  });
  try {
    await server.ready;
    console.log(`  setting up ${options.members} members and ${options.participants} chat participants...`);
    const setup = (await server.request({
      cmd: 'setup',
      members: options.members,
      participants: options.participants,
    })) as unknown as Setup;
    const presentation = await presentationBench(setup, options);
    const chat = await chatBench(setup, options);
    console.log(`\ntransport errors (retried): ${transportErrors}`);
    console.log(`\n${JSON.stringify({ options, presentation, chat, transportErrors })}`);
    if (!presentation.met || !chat.met) process.exitCode = 1;
  } finally {
    agent.destroy();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.env.BENCH_LIVE_ROLE === 'server') await runServer();
else await main();
