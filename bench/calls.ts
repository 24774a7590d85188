/**
 * Benchmark of calls through the whole stack (`npm run bench:calls`; docs/benchmarks.md
 * "Calls through the whole stack"), side by side in one run:
 *
 * (1) REGISTER with digest authentication: SIPp (-au [field0] -ap, an injection CSV of
 *     `--accounts` accounts) against Kamailio alone with a minimal registrar configuration
 *     (auth_db over an SQLite subscriber table, usrloc in memory), then against the Kamailio
 *     that Zentrale starts (its whole configuration, its database, the location table written
 *     back on SQLite, database-only on PostgreSQL). Measured: successful registrations per second, failures.
 * (2) Call setup through Zentrale: SIPp calls a platform number whose dialplan plays an
 *     announcement (Kamailio authenticates the INVITE and routes it to Zentrale's user agent,
 *     which answers with its media endpoint), `--rate` new calls per second, each held
 *     `--hold` ms. Measured: INVITE (authenticated) -> 200 OK p50/p99 (SIPp's response-time
 *     file, 1 ms resolution) and failed calls.
 * (3) The API's latency: open-loop GET /api/session at `--api-rate` per second, once idle and
 *     once while (2) runs, from a client in its own process (`--api-client inline`: in this
 *     one). Measured: p50/p99, and the node's main event loop while (2) runs (utilisation,
 *     delay p99): the API and the SIP UA share it, the media worker does not.
 * (4) Media through rtpengine: `--media-calls` calls at `--media-rate` per second from one SIP
 *     account to another (bridged by rtpengine), each held `--media-hold` ms, so about
 *     rate x hold calls with media at once. The caller (SIPp) streams a PCMU tone of hold - 1 s
 *     (50 packets/s); the callee (SIPp -rtp_echo, registered to Kamailio) sends every packet
 *     back. Loss = 1 - packets rtpengine relayed (its totalstatistics, both directions) / twice
 *     the packets the callers sent.
 *
 * The machine is shared: the load average is printed beside every figure.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { constants, monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { buildApp } from '../src/app.js';
import { insertSipAccount } from '../src/modules/sip/sip.repository.js';
import { loadConfig } from '../src/platform/config.js';
import { newUuid } from '../src/platform/ids.js';
import { sipDigests } from '../src/telephony/index.js';
import { UDP_RECEIVE_BUFFER } from '../src/telephony/kamailio/kamailio-config.js';
import { encodeG711 } from '../src/telephony/media/g711.js';
import { NgClient } from '../src/telephony/rtpengine/ng-client.js';
import { numberWithDialplan } from '../test/calls.js';
import { sine } from '../test/content-inputs.js';
import { freePort } from '../test/sip-peers.js';
import { mainThreadCpu } from './memory.js';
import { openLoop, percentile } from './open-loop.js';
import { openLoopInProcess } from './open-loop-process.js';
import { sippAck, sippAuthenticatedInvite } from './sipp-scenarios.js';

const { values } = parseArgs({
  options: {
    accounts: { type: 'string', default: '1000' },
    registers: { type: 'string', default: '20000' },
    'register-rate': { type: 'string', default: '20000' },
    rate: { type: 'string', default: '100' },
    calls: { type: 'string', default: '3000' },
    hold: { type: 'string', default: '2000' },
    'api-rate': { type: 'string', default: '200' },
    'api-seconds': { type: 'string', default: '10' },
    /**
     * Where the API client runs: `process` (its own process, what an API user sees; since
     * 2026-11-27) or `inline` (the benchmark's process, sharing the node's event loop: every
     * stall counts twice, and the client's work counts as the node's; the figures before).
     */
    'api-client': { type: 'string', default: 'process' },
    /** Only part (1), REGISTER: no calls, no API latency. */
    'register-only': { type: 'boolean', default: false },
    'media-calls': { type: 'string', default: '600' },
    'media-rate': { type: 'string', default: '25' },
    'media-hold': { type: 'string', default: '8000' },
    /** Skip steps: a comma-separated list of `register`, `setup`, `media`. */
    skip: { type: 'string', default: '' },
    /** A PostgreSQL database URL: the node runs on it (usrloc database-only) instead of SQLite. */
    postgres: { type: 'string' },
  },
});
const ACCOUNTS = Number(values.accounts);
const SKIP = new Set(values.skip.split(','));
const REGISTERS = Number(values.registers);
const PASSWORD = 'bench-password-1';
const MODULES = '/usr/lib/x86_64-linux-gnu/kamailio/modules';

const load = () => `load ${os.loadavg()[0]!.toFixed(1)} on ${os.availableParallelism()} cores`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-calls-'));
// SIPUSER names (`<name>_NN`): 100 accounts per user name.
const names = Array.from(
  { length: ACCOUNTS },
  (_, i) => `bench${Math.floor(i / 100)}_${String(i % 100).padStart(2, '0')}`,
);

function registerScenario(domain: string): string {
  const request = (cseq: number, auth: boolean) => `<send retrans="500"><![CDATA[
REGISTER sip:${domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:[field0]@${domain}>;tag=[pid]r[call_number]
To: <sip:[field0]@${domain}>
Call-ID: [call_id]
CSeq: ${cseq} REGISTER
Contact: <sip:[field0]@[local_ip]:[local_port]>
${auth ? '[authentication]\n' : ''}Expires: 600
Max-Forwards: 70
Content-Length: 0

]]></send>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?><scenario name="register">${request(1, false)}<recv response="401" auth="true"/>${request(2, true)}<recv response="200"/></scenario>`;
}

interface SippRun {
  code: number;
  seconds: number;
  successful: number;
  failed: number;
  /** SIPp's retransmissions of requests left unanswered for T1 (500 ms) and more. */
  retransmissions: number;
  /** SIPp's failed calls by its cause (its Failed...(C) counters that are not 0). */
  failures: string;
  /** Answers the kernel dropped at SIPp's own full socket (its drop count when last seen). */
  dropped: number;
  /** Response times (ms) of the rtd mark, ascending. */
  times: number[];
}

async function sipp(
  dir: string,
  target: string,
  args: string[],
  timeoutSeconds: number,
  localPort?: number,
): Promise<SippRun> {
  fs.mkdirSync(dir, { recursive: true });
  const started = performance.now();
  const port = localPort ?? (await freePort());
  const child = spawn(
    'sipp',
    [
      target,
      ...['-i', '127.0.0.1', '-p', String(port), '-mp', String(await freePort())],
      ...['-trace_stat', '-stf', 'stat.csv', '-fd', '1', '-nostdin', '-timeout', `${timeoutSeconds}s`],
      // SIPp's socket buffers default to 64 KB (128 KB in the kernel's count): in a storm, with SIPp
      // waiting for a CPU, its socket dropped up to 33,706 answers per run, each then a
      // retransmission that Kamailio handles in full (docs/benchmarks.md "REGISTER storms: what
      // the stack waited for"). 4 MB is net.core.rmem_max here.
      ...['-buff_size', String(4 * 1024 * 1024)],
      ...(process.env.BENCH_KEEP ? ['-trace_err'] : []),
      ...args,
    ],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  // SIPp's socket goes with it: its drop count is read while it runs.
  let dropped = 0;
  const watch = setInterval(() => {
    dropped = Math.max(dropped, socketDrops(port).drops);
  }, 200);
  const code = await new Promise<number>((resolve) => child.on('exit', (status) => resolve(status ?? 1)));
  clearInterval(watch);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0 && code !== 1) process.stderr.write(`sipp exit ${code}: ${stderr}\n`);
  const lines = fs.readFileSync(path.join(dir, 'stat.csv'), 'utf8').trim().split('\n');
  const header = lines[0]!.split(';');
  const last = lines.at(-1)!.split(';');
  const column = (name: string) => Number(last[header.indexOf(name)]);
  const rtt = fs.readdirSync(dir).find((name) => name.endsWith('_rtt.csv'));
  const times = rtt
    ? fs
        .readFileSync(path.join(dir, rtt), 'utf8')
        .split('\n')
        .slice(1)
        .map((line) => Number(line.split(';')[1]))
        .filter((value) => Number.isFinite(value))
        .sort((a, b) => a - b)
    : [];
  return {
    code,
    seconds,
    successful: column('SuccessfulCall(C)'),
    failed: column('FailedCall(C)'),
    retransmissions: column('Retransmissions(C)'),
    failures:
      header
        .filter((name) => name.startsWith('Failed') && name.endsWith('(C)') && name !== 'FailedCall(C)')
        .filter((name) => column(name) > 0)
        .map((name) => `${column(name)} ${name.slice('Failed'.length, -'(C)'.length)}`)
        .join(', ') || 'none',
    dropped,
    times,
  };
}

/** CPU ticks (user + system, USER_HZ) of each process in the process group `pgid` (Kamailio's). */
function groupTicks(pgid: number): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command (which may hold spaces): state, ppid, pgrp, ... utime (14), stime (15).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // ended meanwhile
    }
  }
  return ticks;
}

/** CPU seconds (user + system) of every process in the process group `pgid`. */
function groupCpu(pgid: number): number {
  let ticks = 0;
  for (const value of groupTicks(pgid).values()) ticks += value;
  return ticks / 100; // USER_HZ
}

/** Where a process sleeps (its kind: UDP receivers wait for packets, timers sleep, TCP and evapi poll). */
function waitsIn(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/wchan`, 'utf8').trim();
  } catch {
    return '?';
  }
}

/**
 * BENCH_PROCS=1: the Kamailio processes that used the most CPU between two snapshots, in µs per
 * registration (which of them is which: `kamcmd ps`, or the order Kamailio forks them in).
 */
function busiestProcesses(before: Map<number, number>, after: Map<number, number>, count: number): string {
  return [...after]
    .map(([pid, ticks]) => [pid, ticks - (before.get(pid) ?? 0)] as const)
    .filter(([, ticks]) => ticks > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([pid, ticks]) => `${pid} ${waitsIn(pid)}: ${((ticks * 1e4) / Math.max(1, count)).toFixed(0)} µs`)
    .join(', ');
}

/**
 * Datagrams the kernel dropped at the UDP socket bound to 127.0.0.1:`port` since it was opened
 * (/proc/net/udp's last column: its receive buffer was full).
 */
function socketDrops(port: number): { drops: number } {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const line of fs.readFileSync('/proc/net/udp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] === local) return { drops: Number(fields.at(-1)) };
  }
  return { drops: 0 };
}

/** CPU seconds of this process (the Zentrale node runs in it). */
function ownCpu(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

async function register(label: string, port: number, domain: string, kamailioGroup: number): Promise<number> {
  const kamailioBefore = groupCpu(kamailioGroup);
  const processesBefore = groupTicks(kamailioGroup);
  const nodeBefore = ownCpu();
  const dropsBefore = socketDrops(port).drops;
  const dir = path.join(work, `register-${label}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'register.xml'), registerScenario(domain));
  fs.writeFileSync(path.join(dir, 'accounts.csv'), `SEQUENTIAL\n${names.join('\n')}\n`);
  const rate = Number(values['register-rate']);
  const run = await sipp(
    dir,
    `127.0.0.1:${port}`,
    [
      ...['-sf', 'register.xml', '-inf', 'accounts.csv', '-au', '[field0]', '-ap', PASSWORD],
      ...['-r', String(rate), '-l', '2000', '-m', String(REGISTERS), '-recv_timeout', '5000'],
    ],
    120,
  );
  const perSecond = run.successful / run.seconds;
  const drops = socketDrops(port).drops - dropsBefore;
  // CPU per registration: steadier than the rate on a shared machine.
  const perRegister = (seconds: number) => ((seconds * 1e6) / Math.max(1, run.successful)).toFixed(0);
  console.log(
    `REGISTER ${label}: ${run.successful} registered, ${run.failed} failed in ${run.seconds.toFixed(1)} s: ` +
      `${perSecond.toFixed(0)}/s (${ACCOUNTS} accounts, SIPp at up to ${rate}/s); CPU per registration: ` +
      `Kamailio ${perRegister(groupCpu(kamailioGroup) - kamailioBefore)} µs, ` +
      `bench process with the Zentrale node ${perRegister(ownCpu() - nodeBefore)} µs; ${load()}`,
  );
  // What the run waited for: requests that SIPp sent again (no answer within 500 ms), why calls
  // failed (TimeoutOnRecv: no answer within 5 s), and the datagrams the kernel dropped.
  console.log(
    `  SIPp: ${run.retransmissions} retransmissions; failed calls by cause: ${run.failures}; ` +
      `UDP datagrams dropped for a full receive buffer: ${drops} at Kamailio's socket, ${run.dropped} at SIPp's`,
  );
  if (process.env.BENCH_PROCS)
    console.log(
      `  Kamailio processes by CPU per registration (pid, where it waits: µs): ${busiestProcesses(processesBefore, groupTicks(kamailioGroup), run.successful)}`,
    );
  return perSecond;
}

/**
 * Kamailio with the least a registrar with digest authentication needs, on its own database;
 * its processes and its socket's receive buffer as in Zentrale's configuration, so that the
 * ratio compares what each does per REGISTER.
 */
async function kamailioAlone(): Promise<{ port: number; pgid: number; stop: () => Promise<void> }> {
  const dir = path.join(work, 'minimal');
  fs.mkdirSync(dir, { recursive: true });
  const dbFile = path.join(dir, 'minimal.db');
  const db = new Database(dbFile);
  db.exec(`CREATE TABLE version (table_name VARCHAR(32) NOT NULL, table_version INTEGER DEFAULT 0 NOT NULL);
    CREATE TABLE subscriber (id INTEGER PRIMARY KEY, username VARCHAR(64), domain VARCHAR(64), ha1 VARCHAR(128), ha1b VARCHAR(128));
    CREATE INDEX subscriber_username ON subscriber (username);`);
  const insert = db.prepare('INSERT INTO subscriber (username, domain, ha1, ha1b) VALUES (?, ?, ?, ?)');
  for (const name of names) {
    const { ha1, ha1b } = sipDigests(name, 'bench.local', PASSWORD);
    insert.run(name, 'bench.local', ha1, ha1b);
  }
  db.close();
  const port = await freePort();
  const cfg = path.join(dir, 'kamailio.cfg');
  fs.writeFileSync(
    cfg,
    `#!KAMAILIO
debug=1
log_stderror=yes
children=4
maxbuffer=${UDP_RECEIVE_BUFFER}
auto_aliases=no
listen=udp:127.0.0.1:${port}
mpath="${MODULES}"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "pv.so"
loadmodule "maxfwd.so"
loadmodule "sanity.so"
loadmodule "textops.so"
loadmodule "db_sqlite.so"
loadmodule "usrloc.so"
loadmodule "registrar.so"
loadmodule "auth.so"
loadmodule "auth_db.so"
modparam("usrloc", "db_mode", 0)
modparam("auth_db", "db_url", "sqlite://${dbFile}")
modparam("auth_db", "calculate_ha1", 0)
modparam("auth_db", "password_column", "ha1")
modparam("auth_db", "use_domain", 0)
modparam("auth_db", "version_table", 0)
request_route {
  if (!mf_process_maxfwd_header("10")) { sl_send_reply("483", "Too Many Hops"); exit; }
  if (!sanity_check()) exit;
  if (!is_method("REGISTER")) { sl_send_reply("404", "Not Here"); exit; }
  if (!auth_check("bench.local", "subscriber", "0")) { auth_challenge("bench.local", "1"); exit; }
  if (!save("location")) sl_reply_error();
  exit;
}
`,
  );
  const log = fs.openSync(path.join(dir, 'kamailio.log'), 'w');
  const child = spawn('kamailio', ['-f', cfg, '-DD', '-E', '-m', '64', '-M', '8'], {
    detached: true,
    stdio: ['ignore', log, log],
  });
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return {
    port,
    pgid: child.pid ?? 0,
    stop: async () => {
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        try {
          if (child.pid) process.kill(-child.pid, signal);
        } catch {
          // ended
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    },
  };
}

function callScenario(number: string, user: string, domain: string, hold: number): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?><scenario name="call">
${sippAuthenticatedInvite(number, user, domain, 'start_rtd="setup"')}
<recv response="200" rtd="setup" rrs="true"/>
${sippAck(number, user, domain, 2, true)}
<pause milliseconds="${hold}"/>
<send retrans="500"><![CDATA[
BYE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${user}@${domain}>;tag=[pid]c[call_number]
To: <sip:${number}@${domain}>[peer_tag_param]
[routes]
Call-ID: [call_id]
CSeq: 3 BYE
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="200"/>
</scenario>`;
}

/** A call from one account to another with a PCMU stream of tone.wav after the ACK (SIPp rtp_stream). */
function mediaScenario(callee: string, user: string, domain: string, hold: number): string {
  return callScenario(callee, user, domain, hold).replace(
    '<pause milliseconds=',
    '<nop><action><exec rtp_stream="../tone.wav,1,0"/></action></nop>\n<pause milliseconds=',
  );
}

/** 8 kHz mono G.711 µ-law WAV (format 7) of the samples, for SIPp's rtp_stream. */
function mulawWav(samples: Float32Array): Uint8Array {
  const data = new Uint8Array(samples.length);
  const pcm = Int16Array.from(samples, (value) => Math.round(Math.max(-1, Math.min(1, value)) * 32767));
  encodeG711(pcm, 0, data);
  const header = Buffer.alloc(58);
  header.write('RIFF', 0);
  header.writeUInt32LE(50 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(18, 16);
  header.writeUInt16LE(7, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.writeUInt16LE(0, 36);
  header.write('fact', 38);
  header.writeUInt32LE(4, 42);
  header.writeUInt32LE(data.length, 46);
  header.write('data', 50);
  header.writeUInt32LE(data.length, 54);
  return Buffer.concat([header, data]);
}

/**
 * The main thread's scheduler figures (/proc schedstat): ns on a CPU and ns waiting runnable for
 * one (the machine's other processes: a stall of the event loop that no code of ours caused).
 */
function mainThreadSchedule(): { running: number; waiting: number } {
  const [running, waiting] = fs
    .readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8')
    .split(' ')
    .map(Number);
  return { running: running ?? 0, waiting: waiting ?? 0 };
}

async function api(url: string, label: string): Promise<number> {
  const options = {
    rate: Number(values['api-rate']),
    seconds: Number(values['api-seconds']),
    connections: 20,
  };
  const result =
    values['api-client'] === 'inline' ? await openLoop(url, options) : await openLoopInProcess(url, options);
  const p99 = percentile(result.latencies, 99) / 1000;
  console.log(
    `API ${label} (client ${values['api-client'] === 'inline' ? "in the node's process" : 'in its own process'}): ` +
      `GET /api/session at ${result.rate}/s, ${result.requests} answers: ` +
      `p50 ${(percentile(result.latencies, 50) / 1000).toFixed(2)} ms, p99 ${p99.toFixed(2)} ms; ${load()}`,
  );
  return p99;
}

// ---- (1) REGISTER: Kamailio alone, then the whole stack
const sipPort = await freePort();
const ngPort = await freePort();
let aloneRate = 0;
if (!SKIP.has('register')) {
  const alone = await kamailioAlone();
  aloneRate = await register('Kamailio alone (minimal config)', alone.port, 'bench.local', alone.pgid);
  await alone.stop();
}

const app = await buildApp(
  loadConfig({
    ...process.env,
    DATA_DIR: path.join(work, 'zentrale'),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    SESSION_RATE_LIMIT: '0',
    TELEPHONY: 'on',
    SIP_PORT: String(sipPort),
    RTP_PORT_MIN: '40000',
    RTP_PORT_MAX: '44999',
    RTPENGINE_CONTROL_PORT: String(ngPort),
    PORT: '0',
    PUBLIC_URL: 'http://127.0.0.1:8080',
    ...(values.postgres ? { DATABASE_URL: values.postgres } : {}),
  }),
);
await app.server.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.server.address();
const apiUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/session`;
const domain = app.config.sipDomainCurrent;
const owner = await app.services.users.createUser({
  username: 'benchowner',
  password: 'bench-password',
  firstname: 'Bench',
  lastname: 'Mark',
  email: 'bench@example.com',
});
for (const name of names) {
  await insertSipAccount(app.database.db, {
    uuid: newUuid(),
    owner: owner.uuid,
    username: name,
    domain,
    password: PASSWORD,
    ...sipDigests(name, domain, PASSWORD),
    description: '',
    created: Math.floor(Date.now() / 1000),
  });
}
if (!SKIP.has('register')) {
  const stackRate = await register(
    `through Zentrale (its Kamailio, database, location ${values.postgres ? 'database-only' : 'written back'})`,
    sipPort,
    domain,
    Number(fs.readFileSync(path.join(app.config.dataDir, 'telephony', 'kamailio.pid'), 'utf8')),
  );
  console.log(`REGISTER ratio stack / Kamailio alone: ${(stackRate / aloneRate).toFixed(2)} (target >= 0.8)`);
}
if (values['register-only']) {
  await app.close();
  if (!process.env.BENCH_KEEP) fs.rmSync(work, { recursive: true, force: true });
  process.exit(0);
}

// ---- (2) + (3) call setup at --rate per second, the API idle and under that load
const number = '+4930999000';
// Quotas that do not limit the benchmark: concurrent calls of the number's owner and the caller's.
await app.services.features.createPack('bench', { quota: { calls: 1000, sip: 99 } });
await app.services.features.assignPack(owner.uuid, 'bench');
await numberWithDialplan(
  app,
  number,
  (announcement) => [{ play: { announcement } }],
  sine(1000, 8000, 30, 0.3),
  (numberOwner) => app.services.features.assignPack(numberOwner, 'bench'),
);
// The announcement plays 30 s: the call is held by the caller, who hangs up after --hold.
if (!SKIP.has('setup')) {
  const idleDelay = monitorEventLoopDelay({ resolution: 10 });
  idleDelay.enable();
  const idleP99 = await api(apiUrl, 'idle');
  idleDelay.disable();
  console.log(
    `main event loop during the idle API run: delay p99 ${(idleDelay.percentile(99) / 1e6).toFixed(1)} ms, ` +
      `max ${(idleDelay.max / 1e6).toFixed(0)} ms`,
  );
  const rate = Number(values.rate);
  const calls = Number(values.calls);
  const callDir = path.join(work, 'calls');
  fs.mkdirSync(callDir, { recursive: true });
  fs.writeFileSync(
    path.join(callDir, 'call.xml'),
    callScenario(number, names[0]!, domain, Number(values.hold)),
  );
  const callRun = sipp(
    callDir,
    `127.0.0.1:${sipPort}`,
    [
      ...['-sf', 'call.xml', '-au', names[0]!, '-ap', PASSWORD, '-r', String(rate), '-m', String(calls)],
      ...['-l', String(rate * 10), '-trace_rtt', '-rtt_freq', '1', '-recv_timeout', '10000'],
    ],
    Math.ceil(calls / rate) + 60,
  );
  // The node's main event loop while the calls run (the API and the SIP UA share it).
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  // The main thread's garbage collection pauses: young-generation scavenges stop it for as long
  // as they copy what survives, which grows with the young generation's size.
  const pauses = { minor: [] as number[], major: [] as number[] };
  const gcs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      (kind === constants.NODE_PERFORMANCE_GC_MINOR ? pauses.minor : pauses.major).push(entry.duration);
    }
  });
  gcs.observe({ entryTypes: ['gc'] });
  const loopBefore = performance.eventLoopUtilization();
  const cpuBefore = { main: mainThreadCpu(), all: process.cpuUsage() };
  const scheduleBefore = mainThreadSchedule();
  const wallBefore = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 5000)); // calls ramp up to rate x hold
  const loadedP99 = await api(apiUrl, `under ${rate} new calls/s`);
  const setup = await callRun;
  const loop = performance.eventLoopUtilization(loopBefore);
  const mainCpu = mainThreadCpu() - cpuBefore.main;
  const scheduleAfter = mainThreadSchedule();
  const wall = (performance.now() - wallBefore) / 1000;
  const allUsage = process.cpuUsage(cpuBefore.all);
  const allCpu = (allUsage.user + allUsage.system) / 1e6;
  delay.disable();
  gcs.disconnect();
  const gcLine = (name: string, durations: number[]) => {
    const sorted = Float64Array.from(durations).sort();
    const total = durations.reduce((sum, ms) => sum + ms, 0);
    return durations.length === 0
      ? `${name} none`
      : `${name} ${durations.length}, ${total.toFixed(0)} ms in all, p50 ${percentile(sorted, 50).toFixed(1)} ms, ` +
          `max ${sorted.at(-1)!.toFixed(1)} ms`;
  };
  console.log(
    `garbage collection during the calls (V8 flags: ${process.execArgv.filter((arg) => arg.startsWith('--max') || arg.startsWith('--min')).join(' ') || 'none'}; ` +
      `NODE_OPTIONS ${process.env.NODE_OPTIONS ?? 'none'}): ${gcLine('scavenges', pauses.minor)}; ${gcLine('other', pauses.major)}`,
  );
  console.log(
    `call setup through Zentrale at ${rate}/s (held ${values.hold} ms, up to ${(rate * Number(values.hold)) / 1000} at once): ` +
      `${setup.successful} completed, ${setup.failed} failed; authenticated INVITE -> 200 ` +
      `p50 ${percentile(Float64Array.from(setup.times), 50).toFixed(0)} ms, p99 ${percentile(Float64Array.from(setup.times), 99).toFixed(0)} ms ` +
      `(${setup.times.length} samples; target p99 < 50 ms); ${load()}`,
  );
  console.log(
    `main event loop during the calls: utilisation ${(loop.utilization * 100).toFixed(0)} %, ` +
      `delay p50 ${(delay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, ` +
      `max ${(delay.max / 1e6).toFixed(0)} ms; CPU of the node's main thread ${mainCpu.toFixed(1)} s ` +
      `(${((mainCpu * 1000) / Math.max(1, setup.successful)).toFixed(2)} ms per call, the API's requests included), ` +
      `all its threads ${allCpu.toFixed(1)} s; the main thread waited runnable for a CPU ` +
      `${((scheduleAfter.waiting - scheduleBefore.waiting) / 1e6 / wall).toFixed(0)} ms per second ` +
      `(ran ${((scheduleAfter.running - scheduleBefore.running) / 1e6 / wall).toFixed(0)} ms per second)`,
  );
  console.log(`API p99 under call load / idle: ${(loadedP99 / idleP99).toFixed(2)} (target <= 2)`);
}

// ---- (4) media through rtpengine: account to account, the caller streams, the callee echoes
if (!SKIP.has('media')) {
  const mediaDir = path.join(work, 'media');
  fs.mkdirSync(mediaDir, { recursive: true });
  const mediaRate = Number(values['media-rate']);
  const mediaCalls = Number(values['media-calls']);
  const mediaHold = Number(values['media-hold']);
  const caller = names[0]!;
  const callee = names[1]!;
  // hold - 1 s of a PCMU tone, played once: no packet is in flight when the BYE goes.
  const packetsPerCall = Math.floor((mediaHold - 1000) / 20);
  fs.writeFileSync(
    path.join(mediaDir, 'tone.wav'),
    mulawWav(sine(1000, 8000, (packetsPerCall * 160) / 8000, 0.3)),
  );
  fs.writeFileSync(path.join(mediaDir, 'call.xml'), mediaScenario(callee, caller, domain, mediaHold));
  fs.writeFileSync(path.join(mediaDir, 'register.xml'), registerScenario(domain));
  fs.writeFileSync(path.join(mediaDir, 'callee.csv'), `SEQUENTIAL\n${callee}\n`);
  const calleePort = await freePort();
  const calleeMediaPort = await freePort();
  const registered = await sipp(
    path.join(mediaDir, 'register'),
    `127.0.0.1:${sipPort}`,
    ['-sf', '../register.xml', '-inf', '../callee.csv', '-au', '[field0]', '-ap', PASSWORD, '-m', '1'],
    20,
    calleePort,
  );
  if (registered.successful !== 1) throw new Error('the callee did not register');
  const uas = spawn(
    'sipp',
    [
      ...['-sn', 'uas', '-i', '127.0.0.1', '-p', String(calleePort), '-mp', String(calleeMediaPort)],
      ...['-rtp_echo', '-nostdin'],
    ],
    { cwd: mediaDir, stdio: 'ignore', detached: true },
  );
  const ng = new NgClient({ host: '127.0.0.1', port: ngPort });
  const relayed = async () => {
    const answer = (await ng.request('statistics', {})) as {
      statistics: { totalstatistics: { relayedpackets: number; relayedpacketerrors: number } };
    };
    return answer.statistics.totalstatistics;
  };
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = await relayed();
    const run = await sipp(
      path.join(mediaDir, 'calls'),
      `127.0.0.1:${sipPort}`,
      [
        ...['-sf', '../call.xml', '-au', caller, '-ap', PASSWORD, '-r', String(mediaRate)],
        ...['-m', String(mediaCalls), '-l', String(mediaRate * 20), '-recv_timeout', '10000'],
      ],
      Math.ceil(mediaCalls / mediaRate + mediaHold / 1000) + 60,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await relayed();
    // SIPp's rtp_stream sends one packet more than the file's frames (measured: 6 calls of 50
    // frames: 612 relayed = 6 x 2 x 51), so each call sends packetsPerCall + 1.
    const sent = run.successful * (packetsPerCall + 1);
    const through = after.relayedpackets - before.relayedpackets;
    const loss = 1 - through / (2 * sent);
    console.log(
      `media through rtpengine: ${run.successful} calls completed, ${run.failed} failed, ` +
        `${mediaRate}/s held ${mediaHold} ms (about ${Math.round((mediaRate * mediaHold) / 1000)} at once); ` +
        `callers sent ${sent} packets, rtpengine relayed ${through} of ${2 * sent} (there and echoed back), ` +
        `errors ${after.relayedpacketerrors - before.relayedpacketerrors}: loss ${(loss * 100).toFixed(3)} % (target < 0.1 %); ${load()}`,
    );
  } finally {
    ng.close();
    try {
      if (uas.pid) process.kill(-uas.pid, 'SIGKILL');
    } catch {
      // ended
    }
  }
}

await app.close();
if (!process.env.BENCH_KEEP) fs.rmSync(work, { recursive: true, force: true });
