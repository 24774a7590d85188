/**
 * Real SIP peers for telephony tests on loopback: SIPp runs a scenario file to completion;
 * baresip runs headless in a temporary config directory (ctrl_tcp netstring JSON control,
 * aufile reading the microphone from a WAV, sndfile writing what it hears, answermode auto). Every peer
 * gets free ports so that test files run in parallel.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { App } from '../src/app.js';
import { insertSipAccount } from '../src/modules/sip/sip.repository.js';
import { writeWav } from '../src/platform/content/wav.js';
import { newUuid } from '../src/platform/ids.js';
import { sipDigests } from '../src/telephony/index.js';
import { until } from './helper.js';

/** A port free for both UDP and TCP on 127.0.0.1 (even, so RTP/RTCP pairs fit). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const socket = dgram.createSocket('udp4');
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => {
        const { port } = socket.address();
        socket.close(() => resolve(port));
      });
    });
    if (port % 2 !== 0 || port > 65000) continue;
    const tcpFree = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (tcpFree) return port;
  }
}

export interface SippResult {
  code: number;
  output: string;
}

/**
 * Runs a SIPp scenario against `target` (host:port); resolves when SIPp exits. `port`: where
 * SIPp listens (a callee scenario is called there); default a free one.
 */
export async function runSipp(
  scenario: string,
  target: string,
  args: string[] = [],
  port?: number,
): Promise<SippResult> {
  port ??= await freePort();
  const mediaPort = await freePort();
  const child = spawn(
    'sipp',
    [
      target,
      ...(scenario.endsWith('.xml') ? ['-sf', scenario] : ['-sn', scenario]),
      '-i',
      '127.0.0.1',
      '-p',
      String(port),
      '-mp',
      String(mediaPort),
      '-s',
      'zentrale',
      '-nostdin',
      '-timeout',
      '30s',
      '-timeout_error',
      '-max_recv_loops',
      '1000',
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: os.tmpdir() },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  });
  const code = await new Promise<number>((resolve) => child.on('exit', (status) => resolve(status ?? 1)));
  return { code, output };
}

export const FIXTURES = path.resolve(import.meta.dirname, '../src/telephony/sip/fixtures');

interface BaresipEvent {
  event?: boolean;
  type?: string;
  response?: boolean;
  ok?: boolean;
  data?: string;
  [key: string]: unknown;
}

export interface Baresip {
  sipPort: number;
  dir: string;
  /** Sends a ctrl_tcp command ("dial", "hangup", "accept", "send_dtmf"...). */
  command(command: string, params?: string): void;
  /** Resolves with the first event of `type` (e.g. CALL_ESTABLISHED) from now on. */
  waitFor(type: string, timeoutMs?: number): Promise<BaresipEvent>;
  events: BaresipEvent[];
  process: ChildProcess;
}

export interface BaresipOptions {
  /** Samples (8 kHz mono) baresip plays as its microphone, looped; default 20 s of silence. */
  microphone?: Int16Array;
  /** `auto` answers calls by itself. */
  answerMode?: 'manual' | 'auto';
  /** Registers as this SIP account at Kamailio (`proxy` = host:port) instead of a local account. */
  account?: { user: string; password: string; domain: string; proxy: string };
}

/** A port baresip wanted was taken between the look-up and its bind (it binds SIP/TLS on port + 1). */
class PortTaken extends Error {}

/** Starts baresip headless with a local account sip:baresip@127.0.0.1:<port>. */
export async function startBaresip(t: TestContext, options: BaresipOptions = {}): Promise<Baresip> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startBaresipOnce(t, options);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= 5) throw error;
    }
  }
}

async function startBaresipOnce(t: TestContext, options: BaresipOptions): Promise<Baresip> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-baresip-'));
  const sipPort = await freePort();
  const ctrlPort = await freePort();
  const rtpPort = await freePort();
  const modules = ['g711', 'ctrl_tcp', 'menu', 'aufile', 'sndfile', 'account'];
  // aufile reads the microphone from a WAV file (ausine only runs at 48 kHz).
  const microphone = path.join(dir, 'microphone.wav');
  fs.writeFileSync(microphone, writeWav(options.microphone ?? new Int16Array(8000 * 20), 8000));
  fs.writeFileSync(
    path.join(dir, 'config'),
    [
      'poll_method epoll',
      `sip_listen 127.0.0.1:${sipPort}`,
      'sip_transports udp',
      'net_interface 127.0.0.1',
      `ctrl_tcp_listen 127.0.0.1:${ctrlPort}`,
      'module_path /usr/lib/baresip/modules',
      ...modules.map((name) => `module ${name}.so`),
      `audio_source aufile,${microphone}`,
      `rtp_ports ${rtpPort}-${rtpPort + 10}`,
      `snd_path ${dir}`,
      'audio_level no',
      '',
    ].join('\n'),
  );
  const { account } = options;
  const aor = account
    ? `<sip:${account.user}@${account.domain}>;auth_pass=${account.password};outbound="sip:${account.proxy};transport=udp";regint=300`
    : `<sip:baresip@127.0.0.1:${sipPort}>;regint=0`;
  fs.writeFileSync(
    path.join(dir, 'accounts'),
    `${aor};answermode=${options.answerMode ?? 'auto'};audio_codecs=PCMU,PCMA\n`,
  );
  const child = spawn('baresip', ['-f', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  });
  t.after(() => {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const socket = await connectWithRetry(ctrlPort, () => log);
  t.after(() => socket.destroy());
  const events: BaresipEvent[] = [];
  const waiters: { type: string; resolve: (event: BaresipEvent) => void }[] = [];
  let buffer = '';
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (;;) {
      const colon = buffer.indexOf(':');
      if (colon < 0) break;
      const length = Number(buffer.slice(0, colon));
      if (buffer.length < colon + 1 + length + 1) break;
      const text = buffer.slice(colon + 1, colon + 1 + length);
      buffer = buffer.slice(colon + 2 + length);
      let event: BaresipEvent;
      try {
        event = JSON.parse(text) as BaresipEvent;
      } catch {
        continue;
      }
      events.push(event);
      for (const waiter of [...waiters]) {
        if (waiter.type === event.type) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    }
  });
  return {
    sipPort,
    dir,
    events,
    process: child,
    command(command, params) {
      const text = JSON.stringify({ command, params: params ?? '', token: String(Date.now()) });
      socket.write(`${Buffer.byteLength(text)}:${text},`);
    },
    waitFor(type, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`baresip: no ${type} within ${timeoutMs} ms; log:\n${log.slice(-3000)}`)),
          timeoutMs,
        );
        waiters.push({
          type,
          resolve: (event) => {
            clearTimeout(timer);
            resolve(event);
          },
        });
      });
    },
  };
}

async function connectWithRetry(port: number, log: () => string): Promise<net.Socket> {
  // Connect only once baresip has loaded its modules: if another process took the control port
  // meanwhile, it would accept the connection and the test would steer someone else's phone
  // (CI: two tests' baresips crossed). A port taken is a new attempt on other ports.
  await until(
    () => log().includes('baresip is ready.') || log().includes('Address already in use'),
    'baresip loaded its modules',
    10_000,
    20,
  ).catch(() => {
    throw new Error(`baresip did not start; log:\n${log()}`);
  });
  if (log().includes('Address already in use')) throw new PortTaken(log());
  let socket: net.Socket | undefined;
  const connects = async () => {
    socket = await new Promise<net.Socket | undefined>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => resolve(s));
      s.once('error', () => resolve(undefined));
    });
    if (!socket && log().includes('Address already in use')) throw new PortTaken(log());
    return socket !== undefined;
  };
  await until(connects, 'baresip opened ctrl_tcp', 10_000, 50).catch((error: unknown) => {
    if (error instanceof PortTaken) throw error;
    throw new Error(`baresip did not open ctrl_tcp; log:\n${log()}`);
  });
  return socket!;
}

export interface TestSipAccount {
  username: string;
  password: string;
  domain: string;
  owner: string;
}

/** A SIP account inserted as the SIP area stores it (with the digests Kamailio checks). */
export async function addSipAccount(
  app: App,
  username: string,
  options: { owner: string; domain?: string; password?: string },
): Promise<TestSipAccount> {
  const domain = options.domain ?? app.config.sipDomainCurrent;
  const password = options.password ?? `pw-${newUuid().slice(0, 8)}`;
  await insertSipAccount(app.database.db, {
    uuid: newUuid(),
    owner: options.owner,
    username,
    domain,
    password,
    ...sipDigests(username, domain, password),
    description: '',
    created: Math.floor(Date.now() / 1000),
  });
  return { username, password, domain, owner: options.owner };
}
