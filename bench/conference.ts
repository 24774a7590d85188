/**
 * `npm run bench:conference` (issue 28, docs/benchmarks.md "Conference mixer"): the media
 * worker's conference mixer against rtpengine relaying the same streams, side by side in one run.
 *
 * - Mixer: Zentrale's media worker (the production worker thread, WorkerMediaEngine) holds
 *   `rooms` rooms of `size` members; each member is a real UDP RTP peer in another process
 *   (bench/conference-members.ts) sending 20 ms PCMU frames and getting its N−1 mix back.
 * - Anchor: the same number of streams relayed by rtpengine alone (one call per pair of members,
 *   offer and answer over its ng protocol, userspace forwarding as Zentrale runs it).
 *
 * Figures: CPU of the media worker thread (and of rtpengine) as % of one core; loss from the
 * RTP sequence numbers each member received; delay from a member's loud frame leaving it to
 * another member hearing it (so the mixer's delay plus two loopback hops and the peers' own
 * scheduling); the mixing delay, the mixer's own (the worker's histogram, mixing-delay.ts: from a
 * frame's arrival in the worker to its mix), beside its bound for the run's send phases (each
 * room ticking once a frame at room-phase.ts's phase, every frame exactly on its phase). Runs:
 * one room of `size` (the cost of a room), then `rooms` rooms (the load). Before and after
 * the runs, a machine probe (bench/machine-probe.ts): the CPU of a fixed mix and of a loopback
 * packet, so that a run on a slower machine state says so.
 *
 * Options: --rooms 50 --size 10 --seconds 20 --warmup 2 --member-procs 2 --skip mixer|relay|one|many
 *   --phases random|fixed (when each member sends in the 20 ms: bench/conference-members.ts)
 *   --seed N (the random phases drawn from N: runs of two versions compare on the same phases)
 *   --peers c|node (the members in C, bench/conference-peers.c, the default when a C compiler is
 *   there; or in Node, bench/conference-members.ts, as before 2026-12-06)
 *   --nice=N (the media worker thread's nice value, WorkerMediaEngineOptions.niceness; default
 *   MEDIA_NICE's, as npm start runs it) --peers-nice=N (the C members' nice value: a negative
 *   one stands for phones with CPUs of their own, whom the machine's other work does not delay)
 *   --histogram (the share of the mixer's delays under 4, 8 .. 100 ms)
 *   --pin (taskset: the media worker thread on CPU 0, the members' processes on CPU 1, as phones
 *   elsewhere would be; unpinned on this two-core VM, some runs fell into a state where the
 *   worker took half as much CPU again for the same work, docs/benchmarks.md)
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../src/platform/config.js';
import { freeUdpPort } from '../src/platform/ports.js';
import { RELAY_FLAGS } from '../src/telephony/calls/relayed-pair.js';
import { phaseOf } from '../src/telephony/media/clock.js';
import { DEFAULT_MEMBER } from '../src/telephony/media/mixer.js';
import { DELAY_BUCKET_MS, delayQuantile } from '../src/telephony/media/mixing-delay.js';
import { bestPhase } from '../src/telephony/media/room-phase.js';
import { WorkerMediaEngine } from '../src/telephony/media/worker-engine.js';
import { WorkerRoom } from '../src/telephony/media/worker-room.js';
import { NgClient } from '../src/telephony/rtpengine/ng-client.js';
import { rtpengineSpec } from '../src/telephony/rtpengine/rtpengine.js';
import { EngineSupervisor } from '../src/telephony/supervisor.js';
import {
  buildPeers,
  CPeers,
  haveCompiler,
  type PeerFigures,
  type PeersRun,
  type RunOptions,
} from './conference-peers.js';
import type { SendPhases } from './conference-voices.js';
import { machineProbe, probeText } from './machine-probe.js';

const { values } = parseArgs({
  options: {
    rooms: { type: 'string', default: '50' },
    size: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
    'member-procs': { type: 'string', default: '2' },
    skip: { type: 'string', multiple: true, default: [] },
    phases: { type: 'string', default: 'random' },
    seed: { type: 'string' },
    peers: { type: 'string', default: haveCompiler() ? 'c' : 'node' },
    nice: { type: 'string', default: String(loadConfig({}).mediaNice) },
    'peers-nice': { type: 'string' },
    histogram: { type: 'boolean', default: false },
    pin: { type: 'boolean', default: false },
  },
});
const ROOMS = Number(values.rooms);
const SIZE = Number(values.size);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const PROCS = Number(values['member-procs']);
const skip = new Set(values.skip);
if (values.phases !== 'random' && values.phases !== 'fixed') throw new Error('--phases random|fixed');
const PHASES: SendPhases = values.phases;
const SEED = values.seed === undefined ? undefined : Number(values.seed);
if (values.peers !== 'c' && values.peers !== 'node') throw new Error('--peers c|node');
const PEERS = values.peers;
const NICE = Number(values.nice);
const PEERS_NICE = values['peers-nice'] === undefined ? undefined : Number(values['peers-nice']);

type Peers = NodePeers | CPeers;

/** A process of synthetic members in Node (bench/conference-members.ts). */
class NodePeers {
  private readonly child: ChildProcess;
  private waiting: ((message: unknown) => void) | undefined;
  ports: number[] = [];

  constructor(private readonly index: number) {
    this.child = fork(path.join(import.meta.dirname, 'conference-members.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (message) => {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.(message);
    });
  }

  private ask<T>(message: Record<string, unknown>): Promise<T> {
    return new Promise((resolve) => {
      this.waiting = resolve as (message: unknown) => void;
      this.child.send(message);
    });
  }

  async open(count: number): Promise<number[]> {
    this.ports = (await this.ask<{ ports: number[] }>({ op: 'open', count })).ports;
    return this.ports;
  }

  run(
    targets: { address: string; port: number }[],
    groups: number[][],
    options: RunOptions,
  ): Promise<PeersRun> {
    return this.ask({
      op: 'run',
      targets,
      groups,
      ...options,
      seed: options.seed === undefined ? undefined : options.seed + this.index,
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  reset(): Promise<unknown> {
    return this.ask({ op: 'reset' });
  }

  exit(): void {
    this.child.send({ op: 'exit' });
  }
}

/** CPU seconds of one thread (/proc/<pid>/task/<tid>/stat) or a process (tid omitted). */
function cpuSeconds(pid: number, tid?: number): number {
  const file = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  const fields = fs.readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime in clock ticks (USER_HZ, 100 on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** `--pin`: the media worker's thread on CPU 0, the members' processes on CPU 1. */
function pin(thread: number, procs: Peers[]): void {
  execFileSync('taskset', ['-p', '-c', '0', String(thread)], { stdio: 'ignore' });
  for (const proc of procs) execFileSync('taskset', ['-p', '-c', '1', String(proc.pid)], { stdio: 'ignore' });
}

/** The media worker's thread (named by worker-engine.ts). */
function mediaThread(): number {
  for (const tid of fs.readdirSync('/proc/self/task'))
    if (fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'media-worker') return Number(tid);
  throw new Error('no media-worker thread');
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

/**
 * What a room ticking once a frame at room-phase.ts's phase makes its members' frames wait when
 * they arrive exactly at their send phases (no jitter, no processing): per room, the tick after
 * the largest gap between the phases; a wait per member, each frame of each member counted alike.
 */
function oneTickBound(groups: number[][], members: PeerFigures[]): number[] {
  const waits: number[] = [];
  for (const group of groups) {
    const phases = group.map((index) => members[index]!.sendPhase).sort((a, b) => a - b);
    const tick = bestPhase(phases);
    if (tick !== undefined) for (const phase of phases) waits.push(phaseOf(tick - phase));
  }
  return waits;
}

/** The share of the mixer's delays (mixing-delay.ts counts) under each of a row of bounds, as one line. */
function histogram(counts: number[]): string {
  const total = counts.reduce((sum, count) => sum + count, 0);
  const under = (ms: number) =>
    counts.slice(0, ms / DELAY_BUCKET_MS).reduce((sum, count) => sum + count, 0) / total;
  return `mixing delay under ${[4, 8, 12, 16, 18, 20, 22, 25, 30, 40, 60, 100].map((ms) => `${ms} ms: ${(under(ms) * 100).toFixed(1)} %`).join(', ')}`;
}

/** Members split over the processes by whole groups; the run's figures over all of them. */
async function measure(
  procs: Peers[],
  groupsPerProc: number[][][],
  targetsPerProc: { address: string; port: number }[][],
  cpu: () => number,
  engine?: WorkerMediaEngine,
) {
  const options = { seconds: SECONDS, warmup: WARMUP, phases: PHASES, seed: SEED };
  const runs = procs.map((proc, i) => proc.run(targetsPerProc[i]!, groupsPerProc[i]!, options));
  await new Promise((resolve) => setTimeout(resolve, WARMUP * 1000));
  const before = cpu();
  // The mixer's own delay counts from here (the call takes what the warm-up counted).
  await engine?.mixingDelays();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const used = cpu() - before;
  const seconds = (performance.now() - started) / 1000;
  const timing = await engine?.mixingDelays();
  const mixing = timing?.delays ?? [];
  const lateness = timing?.lateness ?? [];
  if (values.histogram && mixing.length > 0) console.log(histogram(mixing));
  const figures = await Promise.all(runs);
  const bound = engine
    ? figures.flatMap((f, p) => oneTickBound(groupsPerProc[p]!, f.members)).sort((a, b) => a - b)
    : [];
  await Promise.all(procs.map((proc) => proc.reset()));
  // Members without a part in this run received nothing and expected nothing.
  const active = figures.flatMap((figure) => figure.members);
  const expected = active.reduce((sum, m) => sum + m.expected, 0);
  const received = active.reduce((sum, m) => sum + m.received, 0);
  const delays = active.flatMap((m) => m.delays).sort((a, b) => a - b);
  return {
    corePercent: (used / seconds) * 100,
    mixPercent: timing ? timing.mixMs / seconds / 10 : undefined,
    loss: expected === 0 ? Number.NaN : ((expected - received) / expected) * 100,
    received,
    expected,
    bursts: delays.length,
    p50: percentile(delays, 50),
    p90: percentile(delays, 90),
    p99: percentile(delays, 99),
    under20: delays.length === 0 ? Number.NaN : delays.filter((d) => d < 20).length / delays.length,
    max: delays.at(-1) ?? Number.NaN,
    mixingP50: delayQuantile(mixing, 0.5),
    mixingP99: delayQuantile(mixing, 0.99),
    behind: timing ? timing.behind / mixing.reduce((sum, count) => sum + count, 0) : Number.NaN,
    lateP50: delayQuantile(lateness, 0.5),
    lateP99: delayQuantile(lateness, 0.99),
    boundP50: percentile(bound, 50),
    boundP99: percentile(bound, 99),
    lateTicks: figures.reduce((sum, f) => sum + f.lateTicks, 0),
    peerCpu: figures.reduce((sum, f) => sum + f.cpuSeconds, 0) / (SECONDS + WARMUP),
  };
}

/** Members 0..rooms*size-1 of the processes: per process, its local groups of `size`. */
function layout(procs: Peers[], rooms: number, size: number) {
  const perProc = Math.ceil(rooms / procs.length);
  return procs.map((_, p) => {
    const first = p * perProc;
    const count = Math.max(0, Math.min(rooms, first + perProc) - first);
    return Array.from({ length: count }, (_, g) => Array.from({ length: size }, (_, m) => g * size + m));
  });
}

async function mixerRun(procs: Peers[], rooms: number, size: number) {
  const engine = new WorkerMediaEngine({ portMin: 40000, portMax: 41999, niceness: NICE }, (priority) => {
    if (priority.error)
      console.log(`(the media worker's nice value ${priority.niceness} was refused: ${priority.error})`);
  });
  try {
    const groups = layout(procs, rooms, size);
    const targets: { address: string; port: number }[][] = [];
    const workerRooms: WorkerRoom[] = [];
    for (const [p, proc] of procs.entries()) {
      const list: { address: string; port: number }[] = [];
      for (const group of groups[p]!) {
        const room = new WorkerRoom(engine);
        workerRooms.push(room);
        for (const index of group) {
          const endpoint = await engine.createEndpoint();
          endpoint.setRemote({ address: '127.0.0.1', port: proc.ports[index]!, payloadType: 0 });
          room.join(endpoint, DEFAULT_MEMBER);
          list.push({ address: endpoint.address, port: endpoint.port });
        }
      }
      targets.push(list);
    }
    const thread = mediaThread();
    if (values.pin) pin(thread, procs);
    const figures = await measure(procs, groups, targets, () => cpuSeconds(process.pid, thread), engine);
    for (const room of workerRooms) room.close();
    return figures;
  } finally {
    await engine.close();
  }
}

let callCount = 0;
const sdp = (port: number) =>
  `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=sendrecv\r\n`;
const portOf = (answer: unknown) =>
  Number(/m=audio (\d+)/.exec(String((answer as { sdp?: string }).sdp))![1]);

async function relayRun(procs: Peers[], rooms: number, size: number, ng: NgClient, rtpengine: number) {
  // The same members in pairs: each pair one call through rtpengine.
  const groups = layout(procs, (rooms * size) / 2, 2);
  const targets: { address: string; port: number }[][] = [];
  const calls: string[] = [];
  for (const [p, proc] of procs.entries()) {
    const list: { address: string; port: number }[] = [];
    for (const [a, b] of groups[p]! as [number, number][]) {
      const callId = `bench-${++callCount}-${p}-${a}`;
      calls.push(callId);
      const offer = await ng.request('offer', {
        ...RELAY_FLAGS,
        'call-id': callId,
        'from-tag': `${callId}-a`,
        sdp: sdp(proc.ports[a]!),
      });
      const answer = await ng.request('answer', {
        ...RELAY_FLAGS,
        'call-id': callId,
        'from-tag': `${callId}-a`,
        'to-tag': `${callId}-b`,
        sdp: sdp(proc.ports[b]!),
      });
      // The offer's SDP (rtpengine's, for the callee) names where a's side is reached: a sends
      // there; b sends where the answer's SDP (for the caller) points.
      list[a] = { address: '127.0.0.1', port: portOf(answer) };
      list[b] = { address: '127.0.0.1', port: portOf(offer) };
    }
    targets.push(list);
  }
  const figures = await measure(procs, groups, targets, () => cpuSeconds(rtpengine));
  for (const callId of calls) await ng.request('delete', { 'call-id': callId });
  return figures;
}

function line(name: string, f: Awaited<ReturnType<typeof mixerRun>>): string {
  const mixing =
    f.mixingP50 === undefined
      ? '—'
      : `${f.mixingP50.toFixed(2)} / ${f.mixingP99!.toFixed(2)} ms (bound ${f.boundP50.toFixed(1)} / ${f.boundP99.toFixed(1)})`;
  const why =
    f.lateP50 === undefined
      ? '—'
      : `${(f.behind * 100).toFixed(1)} % / ${f.lateP50.toFixed(2)} / ${f.lateP99!.toFixed(2)} ms`;
  return (
    `| ${name} | ${f.corePercent.toFixed(2)} %${f.mixPercent === undefined ? '' : ` (mixes ${f.mixPercent.toFixed(2)} %)`} | ${f.loss.toFixed(3)} % (${f.received} of ${f.expected}) | ` +
    `${f.p50.toFixed(1)} / ${f.p90.toFixed(1)} / ${f.p99.toFixed(1)} / ${f.max.toFixed(1)} ms (${f.bursts}) | ${(f.under20 * 100).toFixed(1)} % | ${mixing} | ${why} | ${f.lateTicks} | ${(f.peerCpu * 100).toFixed(0)} % |`
  );
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-conference-bench-'));
const controlPort = await freeUdpPort();
const ng = new NgClient({ host: '127.0.0.1', port: controlPort });
const rtpengine = new EngineSupervisor(
  rtpengineSpec(
    {
      binary: 'rtpengine',
      mediaHost: '127.0.0.1',
      controlPort,
      portMin: 42000,
      portMax: 45999,
      pidFile: path.join(dir, 'pid'),
    },
    ng,
  ),
  pino({ level: 'silent' }),
);
const binary = PEERS === 'c' ? buildPeers(dir) : undefined;
const procs: Peers[] = Array.from({ length: PROCS }, (_, i) =>
  binary ? new CPeers(binary, i, PEERS_NICE) : new NodePeers(i),
);
try {
  await rtpengine.start();
  const total = ROOMS * SIZE;
  const perProc = Math.ceil(ROOMS / PROCS) * SIZE;
  for (const proc of procs) await proc.open(perProc);
  console.log(`## Conference mixer vs rtpengine relay, ${new Date().toISOString()}`);
  console.log('');
  console.log(
    `${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ` +
      `${SECONDS} s measured after ${WARMUP} s; members in ${PROCS} processes (${PEERS === 'c' ? 'C' : 'Node'}); 20 ms PCMU frames; send phases ${PHASES}${values.pin ? '; worker on CPU 0, members on CPU 1' : ''}; media worker nice ${NICE}${PEERS_NICE === undefined ? '' : `, members nice ${PEERS_NICE}`}; ${probeText(await machineProbe())}.`,
  );
  console.log('');
  console.log(
    '| run | CPU (media worker thread (of it the mixes) / rtpengine), % of one core | loss | delay p50 / p90 / p99 / max (bursts) | under 20 ms | mixing delay p50 / p99 (one-tick bound) | frames behind another / room ticks late p50 / p99 | late ticks of the peers | peers CPU |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  const pid = rtpengine.pid!;
  if (!skip.has('one')) {
    // One room: its members all in the first process.
    const one = [procs[0]!];
    if (!skip.has('mixer')) console.log(line(`mixer, 1 room of ${SIZE}`, await mixerRun(one, 1, SIZE)));
    if (!skip.has('relay'))
      console.log(
        line(`rtpengine, ${SIZE / 2} calls (${SIZE} streams)`, await relayRun(one, 1, SIZE, ng, pid)),
      );
  }
  if (!skip.has('many')) {
    if (!skip.has('mixer'))
      console.log(line(`mixer, ${ROOMS} rooms of ${SIZE}`, await mixerRun(procs, ROOMS, SIZE)));
    if (!skip.has('relay'))
      console.log(
        line(`rtpengine, ${total / 2} calls (${total} streams)`, await relayRun(procs, ROOMS, SIZE, ng, pid)),
      );
  }
  console.log('');
  console.log(
    `load after: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${probeText(await machineProbe())}`,
  );
} finally {
  for (const proc of procs) proc.exit();
  ng.close();
  await rtpengine.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
