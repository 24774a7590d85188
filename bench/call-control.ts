/**
 * Benchmark of live call control (`npm run bench:call-control`; docs/benchmarks.md "Call
 * control"), in one run:
 *
 * (1) Memory per idle live call: SIPp calls a platform number whose dialplan plays a long
 *     announcement (Zentrale's media worker answers), `--calls` calls at `--rate` per second,
 *     each held until the benchmark ends it. Measured in this process, which is the node (the
 *     benchmark's own part waits meanwhile): V8 heap after full collections and the anonymous
 *     resident set, before the calls and with all of them up; the difference divided by the
 *     calls. The anchor is the same figure for an idle long-poll (docs/benchmarks.md), 9.8 KB.
 * (2) A control command to its effect on the wire: with all calls up, the number's owner sends
 *     POST /api/call/{uuid}/control {command: hold} over HTTP for each call, one after the other;
 *     SIPp answers the re-INVITE (inactive) and the answer of the API comes once the call is
 *     held, so its round trip bounds the time to the re-INVITE on the wire from above. Then
 *     resume, the same way. Measured: p50/p99/max of those round trips. SIPp's message trace
 *     (`--trace`) gives the wire times too, matched in order (one command at a time).
 *
 * The machine is shared: the load average is printed beside every figure.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { insertSipAccount } from '../src/modules/sip/sip.repository.js';
import { loadConfig } from '../src/platform/config.js';
import { newUuid } from '../src/platform/ids.js';
import { sipDigests } from '../src/telephony/index.js';
import { numberWithDialplan } from '../test/calls.js';
import { sine } from '../test/content-inputs.js';
import { freePort } from '../test/sip-peers.js';
import { freePortRange } from '../test/sipp.js';
import { heapAfterGc, readResident } from './memory.js';
import { percentile } from './open-loop.js';
import { sippAck, sippAuthenticatedInvite, sippOk, sippSdp } from './sipp-scenarios.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '200' },
    rate: { type: 'string', default: '50' },
    trace: { type: 'boolean', default: false },
  },
});
const CALLS = Number(values.calls);
const RATE = Number(values.rate);
const PASSWORD = 'bench-password-1';
const ACCOUNT = 'benchcaller';
const NUMBER = '+4930999100';

const load = () =>
  `load ${os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** Calls the number, answers every re-INVITE (hold, then resume) and the BYE of the end. */
function heldScenario(domain: string): string {
  const answerReinvite = (direction: string) => `<recv request="INVITE"/>
${sippOk(sippSdp(direction, 2353687638), `sip:${ACCOUNT}@[local_ip]:[local_port]`)}
<recv request="ACK"/>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?><scenario name="held">
${sippAuthenticatedInvite(NUMBER, ACCOUNT, domain)}
<recv response="200" rrs="true"/>
${sippAck(NUMBER, ACCOUNT, domain, 2, true)}
${answerReinvite('inactive')}
${answerReinvite('sendrecv')}
<recv request="BYE"/>
${sippOk()}
</scenario>`;
}

async function http(base: string, method: string, url: string, sid?: string, body?: unknown) {
  const response = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(sid ? { authorization: `Bearer ${sid}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await response.json()) as Record<string, unknown>;
}

/** Wall-clock times (ms since epoch) of the INVITEs SIPp received, in order (its -trace_msg file). */
function receivedInvites(dir: string): number[] {
  const file = fs.readdirSync(dir).find((name) => name.endsWith('_messages.log'));
  if (!file) return [];
  const times: number[] = [];
  const lines = fs.readFileSync(path.join(dir, file), 'utf8').split('\n');
  for (let i = 0; i + 2 < lines.length; i++) {
    // "---- 2026-12-04 13:55:00.123456 (local time: UTC here)\n<proto> message received [n] bytes :\n\nINVITE ..."
    const stamp = /^-+ (\d{4}-\d\d-\d\d)[\t ](\d\d:\d\d:\d\d\.\d+)/.exec(lines[i]!);
    if (!stamp || !/message received/.test(lines[i + 1]!)) continue;
    const first = lines.slice(i + 2, i + 5).find((line) => line.trim() !== '');
    if (first?.startsWith('INVITE ')) times.push(Date.parse(`${stamp[1]}T${stamp[2]!.slice(0, 12)}Z`));
  }
  return times;
}

function summary(label: string, samples: number[]): void {
  const sorted = Float64Array.from(samples).sort();
  console.log(
    `${label}: ${samples.length} commands, p50 ${percentile(sorted, 50).toFixed(2)} ms, ` +
      `p99 ${percentile(sorted, 99).toFixed(2)} ms, max ${(sorted.at(-1) ?? Number.NaN).toFixed(2)} ms; ${load()}`,
  );
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-control-'));
const sipPort = await freePort();
const [rtpMin, rtpMax] = await freePortRange(Math.max(100, CALLS * 4 + 20));
const app = await buildApp(
  loadConfig({
    ...process.env,
    DATA_DIR: path.join(work, 'zentrale'),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    SESSION_RATE_LIMIT: '0',
    TELEPHONY: 'on',
    SIP_PORT: String(sipPort),
    RTP_PORT_MIN: String(rtpMin),
    RTP_PORT_MAX: String(rtpMax),
    PORT: '0',
    PUBLIC_URL: 'http://127.0.0.1:8080',
  }),
);
await app.server.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
const domain = app.config.sipDomainCurrent;
const engine = app.services.telephony.calls;
if (!engine) throw new Error('the call engine does not run (are Kamailio and rtpengine installed?)');

await app.services.features.createPack('bench', { quota: { calls: 10_000, sip: 99 } });
const caller = await app.services.users.createUser({
  username: 'benchcaller',
  password: 'bench-password',
  firstname: 'Bench',
  lastname: 'Caller',
  email: 'caller@example.com',
});
await app.services.features.assignPack(caller.uuid, 'bench');
await insertSipAccount(app.database.db, {
  uuid: newUuid(),
  owner: caller.uuid,
  username: ACCOUNT,
  domain,
  password: PASSWORD,
  ...sipDigests(ACCOUNT, domain, PASSWORD),
  description: '',
  created: Math.floor(Date.now() / 1000),
});
// The announcement lasts longer than the benchmark: the calls stay up until it hangs them up.
const { user: owner } = await numberWithDialplan(
  app,
  NUMBER,
  (announcement) => [{ play: { announcement } }],
  sine(1000, 8000, 240, 0.3),
  (numberOwner) => app.services.features.assignPack(numberOwner, 'bench'),
);
const login = await http(base, 'GET', '/api/session');
const sid = login.sid as string;
const logged = await http(base, 'POST', '/api/session', sid, {
  username: owner.username,
  password: owner.password,
});
if (logged.status !== 'ok') throw new Error(`login: ${String(logged.status)}`);

console.log(`Call control: ${CALLS} calls at ${RATE}/s, node ${process.version}; ${load()}`);
const heapBefore = await heapAfterGc();
const residentBefore = readResident(process.pid);

const dir = path.join(work, 'sipp');
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, 'held.xml'), heldScenario(domain));
const sippDone = new Promise<number>((resolve) => {
  void (async () => {
    const child = spawn(
      'sipp',
      [
        `127.0.0.1:${sipPort}`,
        ...['-i', '127.0.0.1', '-p', String(await freePort()), '-mp', String(await freePort())],
        ...['-sf', 'held.xml', '-au', ACCOUNT, '-ap', PASSWORD, '-r', String(RATE), '-m', String(CALLS)],
        ...['-l', String(CALLS), '-nostdin', '-recv_timeout', '200000', '-timeout', '300s'],
        ...(values.trace ? ['-trace_msg'] : []),
      ],
      { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    child.on('exit', (code) => resolve(code ?? 1));
  })();
});

const deadline = performance.now() + 60_000 + (CALLS / RATE) * 2000;
while (engine.callCount < CALLS) {
  if (process.env.BENCH_DEBUG) console.log('up', engine.callCount);
  if (performance.now() > deadline) throw new Error(`only ${engine.callCount} of ${CALLS} calls came up`);
  await new Promise((resolve) => setTimeout(resolve, 100));
}
// Every call answered and playing (the last ones a moment after their INVITE).
await new Promise((resolve) => setTimeout(resolve, 2000));
const heapUp = await heapAfterGc();
const residentUp = readResident(process.pid);
console.log(
  `memory per idle live call (${engine.callCount} up): heap ${kb((heapUp.heapUsed - heapBefore.heapUsed) / CALLS)}, ` +
    `external ${kb((heapUp.external - heapBefore.external) / CALLS)}, ` +
    `RssAnon ${kb((residentUp.anon - residentBefore.anon) / CALLS)} (target < 50 KB); ${load()}`,
);

const listed = await http(base, 'GET', '/api/call?count=500', sid);
const uuids = (listed.call as { uuid: string }[]).map((call) => call.uuid);
if (uuids.length < CALLS) throw new Error(`GET /api/call listed ${uuids.length} of ${CALLS} calls`);
const sent: number[] = [];
for (const command of ['hold', 'resume'] as const) {
  const times: number[] = [];
  for (const uuid of uuids) {
    sent.push(Date.now());
    const started = performance.now();
    const answer = await http(base, 'POST', `/api/call/${uuid}/control`, sid, { command });
    times.push(performance.now() - started);
    if (answer.status !== 'ok') throw new Error(`${command}: ${String(answer.status)}`);
  }
  summary(`${command}: POST /api/call/{uuid}/control answered (the re-INVITE answered by then)`, times);
}
for (const uuid of uuids) await http(base, 'POST', `/api/call/${uuid}/control`, sid, { command: 'hangup' });
const code = await sippDone;
if (values.trace) {
  // SIPp sends the calls' INVITEs and receives only the re-INVITEs, in command order.
  const received = receivedInvites(dir);
  if (received.length === sent.length) {
    summary(
      'command sent -> re-INVITE received by SIPp (wall clock, 1 ms resolution)',
      received.map((time, index) => time - sent[index]!),
    );
  } else {
    console.log(`SIPp's trace holds ${received.length} re-INVITEs for ${sent.length} commands: not matched`);
  }
}
console.log(`SIPp exit ${code}`);
await app.close();
if (!process.env.BENCH_KEEP) fs.rmSync(work, { recursive: true, force: true });
