/**
 * rtpengine's ng control protocol: Zentrale's NgClient against the npm `rtpengine-client`,
 * on the same rtpengine daemon, side by side. Each cycle is one call's offer, answer and
 * delete; `CONCURRENCY` cycles run at once. Run: `npx tsx bench/telephony-ng.ts`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { Client as RtpengineClient } from 'rtpengine-client';
import { freeUdpPort } from '../src/platform/ports.js';
import { NgClient } from '../src/telephony/rtpengine/ng-client.js';
import { rtpengineSpec } from '../src/telephony/rtpengine/rtpengine.js';
import { EngineSupervisor } from '../src/telephony/supervisor.js';

const CYCLES = Number(process.env.CYCLES ?? 3000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);

type Send = (command: string, parameters: Record<string, unknown>) => Promise<unknown>;

const sdp = (port: number) =>
  `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\n`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

async function run(name: string, send: Send): Promise<void> {
  const latencies: number[] = [];
  let next = 0;
  const timed = async (command: string, parameters: Record<string, unknown>) => {
    const start = performance.now();
    await send(command, parameters);
    latencies.push(performance.now() - start);
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CYCLES) {
        const callId = `${name}-${next++}`;
        await timed('offer', { 'call-id': callId, 'from-tag': 'a', sdp: sdp(4000) });
        await timed('answer', { 'call-id': callId, 'from-tag': 'a', 'to-tag': 'b', sdp: sdp(4002) });
        await timed('delete', { 'call-id': callId, 'from-tag': 'a' });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(18)} ${(CYCLES / seconds).toFixed(0).padStart(6)} calls/s  ${((CYCLES * 3) / seconds).toFixed(0).padStart(6)} requests/s  ` +
      `p50 ${percentile(latencies, 50).toFixed(2)} ms  p99 ${percentile(latencies, 99).toFixed(2)} ms`,
  );
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-ng-bench-'));
const port = await freeUdpPort();
const ours = new NgClient({ host: '127.0.0.1', port });
const engine = new EngineSupervisor(
  rtpengineSpec(
    {
      binary: 'rtpengine',
      mediaHost: '127.0.0.1',
      controlPort: port,
      portMin: 42000,
      portMax: 43999,
      pidFile: path.join(dir, 'pid'),
    },
    ours,
  ),
  pino({ level: 'silent' }),
);
await engine.start();
const theirs = new RtpengineClient({ timeout: 5000 });
try {
  console.log(
    `ng protocol, ${CYCLES} calls (offer+answer+delete), ${CONCURRENCY} at once, rtpengine on 127.0.0.1`,
  );
  for (let round = 0; round < 2; round++) {
    await run('NgClient', (command, parameters) => ours.request(command, parameters as never));
    await run('rtpengine-client', (command, parameters) =>
      (theirs as unknown as Record<string, (p: number, h: string, o: unknown) => Promise<unknown>>)[command]!(
        port,
        '127.0.0.1',
        parameters,
      ),
    );
  }
} finally {
  ours.close();
  (theirs as unknown as { close(): void }).close();
  await engine.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
