/**
 * Benchmark of Zentrale's SIP user agent and media endpoints (`npm run bench:sip`;
 * docs/benchmarks.md "SIP user agent").
 *
 * (1) Call setup: SIPp (a separate process) calls our UA at each `--rate` (default 100,500) new
 *     calls per second for `--calls` calls (INVITE, 180, 200, ACK, 200 ms, BYE); the UA answers at once with SDP.
 *     Measured: calls completed per second, SIPp's INVITE->200 response time per call
 *     (p50/p99 from its -trace_rtt file, 1 ms resolution), and the UA process's CPU time.
 * (2) Media: `--streams` endpoints (default 100) in pairs send a 1000 Hz tone to each other
 *     and record it, for `--seconds` seconds. Measured: CPU of this process as a share of one
 *     core, and packets received against packets sent.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { MediaEngine } from '../src/telephony/media/index.js';
import { LocalSdp, negotiate, SipUserAgent } from '../src/telephony/sip/index.js';
import { freePort } from '../test/sip-peers.js';
import { sleep } from './stats.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '100,500' },
    calls: { type: 'string', default: '2000' },
    streams: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
  },
});
const rates = values.rate.split(',').map(Number);
const calls = Number(values.calls);
const streams = Number(values.streams);
const seconds = Number(values.seconds);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

async function callSetup(rate: number): Promise<void> {
  const ua = await SipUserAgent.start({ host: '127.0.0.1', port: 0, tcp: false });
  const local = { address: '127.0.0.1', port: 31000 };
  let answered = 0;
  ua.onInvite((call) => {
    call.progress(180);
    const negotiated = call.offer && negotiate(call.offer, local);
    if (!negotiated) return call.reject(488);
    answered++;
    call.answer(new LocalSdp().answer(local, negotiated)).catch(() => {});
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-sip-'));
  const scenario = path.resolve(import.meta.dirname, '../src/telephony/sip/fixtures/uac-call.xml');
  const sippPort = await freePort();
  const mediaPort = await freePort();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const child = spawn(
    'sipp',
    [
      `127.0.0.1:${ua.port}`,
      '-sf',
      scenario,
      '-i',
      '127.0.0.1',
      '-p',
      String(sippPort),
      '-mp',
      String(mediaPort),
      '-r',
      String(rate),
      '-m',
      String(calls),
      '-l',
      String(rate * 10),
      '-nostdin',
      '-trace_rtt',
      '-rtt_freq',
      '1',
      '-trace_stat',
      '-timeout',
      `${Math.ceil(calls / rate) + 60}s`,
    ],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const code = await new Promise<number>((resolve) => child.on('exit', (status) => resolve(status ?? 1)));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  loop.disable();
  // Completed transactions stay 64*T1 (32 s) to absorb retransmissions: the bounded table's peak.
  const transactions = ua.layer.size;
  const heap = process.memoryUsage().heapUsed / 2 ** 20;
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
  const stat = fs.readdirSync(dir).find((name) => name.endsWith('_.csv'));
  const failed = stat
    ? Number(
        fs.readFileSync(path.join(dir, stat), 'utf8').trim().split('\n').at(-1)?.split(';')[16] ?? Number.NaN,
      )
    : Number.NaN;
  console.log(
    `call setup at ${rate}/s, ${calls} calls: sipp exit ${code}, ${answered} answered, ${failed} failed (SIPp), ` +
      `${(answered / elapsed).toFixed(0)} calls/s over ${elapsed.toFixed(1)} s incl. the last call's 200 ms; ` +
      `INVITE->200 p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms, ` +
      `max ${(times.at(-1) ?? Number.NaN).toFixed(2)} ms (${times.length} samples); ` +
      `UA CPU ${((used.user + used.system) / 1000 / elapsed / 10).toFixed(1)} % of one core; ` +
      `UA event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms; ` +
      `${transactions} transactions held, heap ${heap.toFixed(0)} MB; ` +
      `load average ${os.loadavg()[0]!.toFixed(1)} on ${os.availableParallelism()} cores`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
  await ua.close();
}

async function media(): Promise<void> {
  const engine = new MediaEngine({ portMin: 31000, portMax: 31999 });
  const endpoints = [];
  for (let i = 0; i < streams; i++) endpoints.push(await engine.createEndpoint());
  for (let i = 0; i < streams; i += 2) {
    const a = endpoints[i]!;
    const b = endpoints[i + 1] ?? endpoints[0]!;
    a.setRemote({ address: '127.0.0.1', port: b.port, payloadType: 0 });
    b.setRemote({ address: '127.0.0.1', port: a.port, payloadType: 0 });
  }
  const recorders = endpoints.map((endpoint) => endpoint.record(seconds + 5));
  for (const endpoint of endpoints) void endpoint.tone(1000);
  await sleep(1000);
  const sentBefore = endpoints.reduce((sum, e) => sum + e.stats.sent, 0);
  const receivedBefore = endpoints.reduce((sum, e) => sum + e.stats.received, 0);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await sleep(seconds * 1000);
  const used = process.cpuUsage(cpu);
  const elapsed = (performance.now() - started) / 1000;
  const sent = endpoints.reduce((sum, e) => sum + e.stats.sent, 0) - sentBefore;
  const received = endpoints.reduce((sum, e) => sum + e.stats.received, 0) - receivedBefore;
  for (const recorder of recorders) recorder.stop();
  engine.close();
  console.log(
    `media: ${streams} endpoints sending and recording 20 ms G.711 for ${elapsed.toFixed(1)} s: ` +
      `${(sent / elapsed / streams).toFixed(1)} packets/s per stream (50 expected), ` +
      `received ${((received / sent) * 100).toFixed(2)} % of sent; ` +
      `CPU ${((used.user + used.system) / 1000 / elapsed / 10).toFixed(1)} % of one core`,
  );
}

for (const rate of rates) await callSetup(rate);
await media();
