/**
 * Real SIP clients for the telephony tests: SIPp (Debian sip-tester) runs one REGISTER
 * transaction with digest authentication and says whether the server answered as expected.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { newUuid } from '../src/platform/ids.js';
import { freeUdpPort } from '../src/platform/ports.js';

export { freeUdpPort };

/** Fails with a clear message when the Debian packages are missing (never skips). */
export function requireTelephonyPackages(): void {
  for (const binary of ['kamailio', 'rtpengine', 'sipp']) {
    const found = spawnSync('sh', ['-c', `command -v ${binary} || test -x /usr/sbin/${binary}`]).status === 0;
    if (!found) throw new Error(`${binary} is not installed: run scripts/install-telephony.sh`);
  }
}

/** A free block of `size` UDP ports for rtpengine (checked by binding its ends). */
export async function freePortRange(size = 20): Promise<[number, number]> {
  const base = 20000 + Math.floor(Math.random() * 40000);
  return [base, base + size - 1];
}

export interface RegisterOptions {
  server: string; // host:port of Kamailio
  user: string;
  password: string;
  /** Request-URI and To domain: the account's domain or the server's IP:port. */
  domain: string;
  expires?: number;
  /** Source address of the phone (any 127.x.y.z). */
  localIp?: string;
  /** Source port (and the Contact's): an earlier run's port refreshes that registration. */
  localPort?: number;
  /** The final answer SIPp must see: 200 (registered), 401 (refused) or 503 (throttled). */
  expect: 200 | 401 | 503;
}

function scenario(options: RegisterOptions): string {
  const expires = options.expires ?? 120;
  const request = (cseq: number, auth: boolean) => `<send retrans="500"><![CDATA[
REGISTER sip:${options.domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${options.user}@${options.domain}>;tag=[pid]t[call_number]
To: <sip:${options.user}@${options.domain}>
Call-ID: [call_id]
CSeq: ${cseq} REGISTER
Contact: ${expires === 0 ? '*' : `<sip:${options.user}@[local_ip]:[local_port]>`}
${auth ? '[authentication]\n' : ''}Expires: ${expires}
Max-Forwards: 70
User-Agent: sipp-test
Content-Length: 0

]]></send>`;
  const body =
    options.expect === 503
      ? `${request(1, false)}<recv response="503"/>`
      : `${request(1, false)}<recv response="401" auth="true"/>${request(2, true)}<recv response="${options.expect}"/>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?><scenario name="register">${body}</scenario>`;
}

/** Runs one registration; resolves with the local port SIPp used, rejects when the answer differs. */
export async function sippRegister(options: RegisterOptions): Promise<{ port: number }> {
  const localIp = options.localIp ?? '127.0.0.1';
  const port = options.localPort ?? (await freeUdpPort(localIp));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-sipp-'));
  const file = path.join(dir, 'register.xml');
  fs.writeFileSync(file, scenario(options));
  const [host, serverPort] = options.server.split(':');
  const args = [
    `${host}:${serverPort}`,
    ...['-sf', file, '-m', '1', '-i', localIp, '-p', String(port), '-t', 'u1'],
    ...['-au', options.user, '-ap', options.password, '-timeout', '15s', '-timeout_error', '-nostdin'],
  ];
  try {
    const code = await new Promise<number>((resolve, reject) => {
      const child = spawn('sipp', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        if (stderr.length < 4000) stderr += chunk.toString();
      });
      child.once('error', reject);
      child.once('exit', (status) => {
        if (status !== 0 && stderr) process.stderr.write(`sipp: ${stderr}\n`);
        resolve(status ?? 1);
      });
    });
    if (code !== 0)
      throw new Error(`SIPp: expected ${options.expect} for ${options.user}, exit code ${code}`);
    return { port };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface BurstOptions {
  server: string;
  /** Account names, registered in turn (SIPp's injection file); all with `password`. */
  users: readonly string[];
  password: string;
  domain: string;
  /** REGISTER transactions started per second. */
  rate: number;
}

/**
 * Registers every account of `users` once, `rate` new registrations per second, each with its
 * own Call-ID; resolves with SIPp's counts and the unexpected statuses that came back (e.g. 500).
 */
export async function sippRegisterBurst(
  options: BurstOptions,
): Promise<{ successful: number; failed: number; unexpected: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-sipp-burst-'));
  const request = (cseq: number, auth: boolean) => `<send retrans="500"><![CDATA[
REGISTER sip:${options.domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:[field0]@${options.domain}>;tag=[pid]b[call_number]
To: <sip:[field0]@${options.domain}>
Call-ID: [call_id]
CSeq: ${cseq} REGISTER
Contact: <sip:[field0]@[local_ip]:[local_port]>
${auth ? '[authentication]\n' : ''}Expires: 600
Max-Forwards: 70
User-Agent: sipp-burst
Content-Length: 0

]]></send>`;
  fs.writeFileSync(
    path.join(dir, 'burst.xml'),
    `<?xml version="1.0" encoding="ISO-8859-1" ?><scenario name="burst">${request(1, false)}<recv response="401" auth="true"/>${request(2, true)}<recv response="200"/></scenario>`,
  );
  fs.writeFileSync(path.join(dir, 'accounts.csv'), `SEQUENTIAL\n${options.users.join('\n')}\n`);
  const port = await freeUdpPort('127.0.0.1');
  const args = [
    options.server,
    ...['-sf', 'burst.xml', '-inf', 'accounts.csv', '-m', String(options.users.length)],
    ...['-r', String(options.rate), '-l', '1000', '-i', '127.0.0.1', '-p', String(port), '-t', 'u1'],
    ...['-au', '[field0]', '-ap', options.password, '-recv_timeout', '10000', '-timeout', '60s'],
    ...['-trace_stat', '-stf', 'stat.csv', '-trace_err', '-error_file', 'errors.log', '-nostdin'],
  ];
  try {
    await new Promise<number>((resolve, reject) => {
      const child = spawn('sipp', args, { cwd: dir, stdio: 'ignore' });
      child.once('error', reject);
      child.once('exit', (status) => resolve(status ?? 1));
    });
    const lines = fs.readFileSync(path.join(dir, 'stat.csv'), 'utf8').trim().split('\n');
    const header = (lines[0] ?? '').split(';');
    const last = (lines.at(-1) ?? '').split(';');
    const column = (name: string) => Number(last[header.indexOf(name)]);
    const errors = fs.existsSync(path.join(dir, 'errors.log'))
      ? fs.readFileSync(path.join(dir, 'errors.log'), 'utf8')
      : '';
    const unexpected = [
      ...new Set([...errors.matchAll(/^SIP\/2\.0 (\d{3})/gm)].map((match) => match[1] ?? '')),
    ];
    return { successful: column('SuccessfulCall(C)'), failed: column('FailedCall(C)'), unexpected };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One REGISTER without credentials over UDP from `localIp`; the answer's status, challenge and
 * Retry-After (NaN without one).
 */
export async function challenge(server: string, user: string, domain: string, localIp = '127.0.0.1') {
  const [host, port] = server.split(':');
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, localIp, () => resolve()));
  const local = socket.address().port;
  const id = newUuid().slice(0, 8);
  const answer = new Promise<string>((resolve) => socket.once('message', (data) => resolve(data.toString())));
  socket.send(
    [
      `REGISTER sip:${domain} SIP/2.0`,
      `Via: SIP/2.0/UDP ${localIp}:${local};branch=z9hG4bK${id};rport`,
      `From: <sip:${user}@${domain}>;tag=${id}`,
      `To: <sip:${user}@${domain}>`,
      `Call-ID: ${id}`,
      'CSeq: 1 REGISTER',
      `Contact: <sip:${user}@${localIp}:${local}>`,
      'Max-Forwards: 70',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'),
    Number(port),
    host,
  );
  const text = await answer;
  socket.close();
  const status = text.split('\r\n')[0];
  const realm = /WWW-Authenticate: Digest realm="([^"]*)"/i.exec(text)?.[1];
  const headers = text
    .split('\r\n')
    .slice(1)
    .map((line) => line.split(':')[0]?.toLowerCase())
    .filter(Boolean)
    .sort();
  const retryAfter = Number(/^Retry-After:\s*(\d+)/im.exec(text)?.[1] ?? Number.NaN);
  return { status, realm, headers, retryAfter };
}

/**
 * Wrong passwords for `user` from `localIp` until Kamailio refuses the account there for good
 * (a Retry-After of minutes), waiting out each short hold as a patient guesser would (the holds
 * are what is tested); the number of failed authentications it took. At most 100 guesses.
 */
export async function guessUntilRefused(options: {
  server: string;
  user: string;
  domain: string;
  localIp: string;
}): Promise<number> {
  let failures = 0;
  for (let guess = 0; guess < 100; guess++) {
    const probe = await challenge(options.server, options.user, options.domain, options.localIp);
    if (probe.status?.startsWith('SIP/2.0 503')) {
      if (probe.retryAfter > 60) return failures;
      assert.ok(
        probe.retryAfter >= 1 && probe.retryAfter <= 2,
        `a short hold, got Retry-After ${probe.retryAfter}`,
      );
      // Kamailio's hold runs on its own clock: the guesser waits it out as a phone would.
      await sleep(probe.retryAfter * 1000);
      continue;
    }
    try {
      await sippRegister({ ...options, password: `guess${guess}`, expect: 401 });
    } catch (error) {
      // Another phone of the account at that address (a retrying baresip) may have brought on
      // a hold since the probe: the next probe sees it.
      const again = await challenge(options.server, options.user, options.domain, options.localIp);
      if (again.status?.startsWith('SIP/2.0 503')) continue;
      throw error;
    }
    failures += 1;
  }
  throw new Error(`${options.user} from ${options.localIp} still not refused after 100 guesses`);
}
