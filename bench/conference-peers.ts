/**
 * The synthetic conference members of `npm run bench:conference -- --peers c` (the default): the
 * same members as bench/conference-members.ts (the same frames, bursts and seeded send phases),
 * sent and received by bench/conference-peers.c, which this compiles with the system's C
 * compiler and drives over its stdin and stdout (protocol in the C file's top comment). Why C:
 * the Node peers took about half a core of the two and sent on 1 ms timers that fire late under
 * load, so their own jitter and CPU went into the mixer's figures.
 */
import { type ChildProcessByStdio, execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { decodeG711 } from '../src/telephony/media/g711.js';
import { seeded } from '../test/seeded.js';
import {
  burstSlot,
  CYCLE,
  loudFrame,
  phaseIndexes,
  type SendPhases,
  VOICES,
  voice,
} from './conference-voices.js';

export interface PeerFigures {
  /** When in the 20 ms (of the machine's clock) it sends. */
  sendPhase: number;
  received: number;
  expected: number;
  delays: number[];
}
export interface PeersRun {
  sent: number;
  lateTicks: number;
  cpuSeconds: number;
  members: PeerFigures[];
}
export interface RunOptions {
  seconds: number;
  warmup: number;
  phases: SendPhases;
  seed: number | undefined;
}

/** Compiles bench/conference-peers.c once per bench run; the binary's path. */
export function buildPeers(dir: string): string {
  const binary = path.join(dir, 'conference-peers');
  execFileSync('cc', ['-O2', '-o', binary, path.join(import.meta.dirname, 'conference-peers.c')], {
    stdio: 'inherit',
  });
  return binary;
}

/** The frame index of the burst in the frames sent to the C peers; quiet voices come first. */
const LOUD_FRAME = VOICES * CYCLE;

export class CPeers {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly lines: AsyncIterator<string>;
  ports: number[] = [];

  constructor(
    binary: string,
    private readonly index: number,
    niceness?: number,
  ) {
    this.child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    if (niceness !== undefined) this.send(`nice ${niceness}`);
    this.lines = readline.createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
    const table = new Int16Array(256);
    decodeG711(
      Uint8Array.from({ length: 256 }, (_, i) => i),
      0,
      table,
    );
    this.send(`decode ${[...table].join(' ')}`);
    for (let v = 0; v < VOICES; v++)
      voice(v).forEach((frame, f) => {
        this.send(`frame ${v * CYCLE + f} ${Buffer.from(frame).toString('hex')}`);
      });
    this.send(`frame ${LOUD_FRAME} ${Buffer.from(loudFrame).toString('hex')}`);
  }

  private send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  private async line(): Promise<string> {
    const next = await this.lines.next();
    if (next.done) throw new Error('conference-peers ended');
    return next.value;
  }

  async open(count: number): Promise<number[]> {
    this.send(`open ${count}`);
    this.ports = (await this.line()).split(' ').slice(1).map(Number);
    return this.ports;
  }

  async run(
    targets: { address: string; port: number }[],
    groups: number[][],
    options: RunOptions,
  ): Promise<PeersRun> {
    const random = options.seed === undefined ? Math.random : seeded(options.seed + this.index);
    const { phases, indexes } = phaseIndexes(this.ports.length, options.phases, random);
    groups.forEach((group, g) => {
      group.forEach((index, position) => {
        const slot = burstSlot(position, group.length);
        const target = targets[index];
        if (target)
          this.send(
            `member ${index} ${target.port} ${g} ${slot} ${(position % VOICES) * CYCLE} ${indexes[index]}`,
          );
      });
    });
    this.send(`run ${options.seconds} ${options.warmup} ${phases} ${LOUD_FRAME}`);
    const members: PeerFigures[] = [];
    for (;;) {
      const fields = (await this.line()).split(' ');
      if (fields[0] === 'figures')
        return {
          sent: Number(fields[1]),
          lateTicks: Number(fields[2]),
          cpuSeconds: Number(fields[3]),
          members,
        };
      members[Number(fields[1])] = {
        sendPhase: Number(fields[2]),
        received: Number(fields[3]),
        expected: Number(fields[4]),
        delays: fields.slice(5).map(Number),
      };
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  async reset(): Promise<void> {
    this.send('reset');
    await this.line();
  }

  exit(): void {
    this.send('exit');
  }
}

/** Whether a C compiler is there to build the peers. */
export function haveCompiler(): boolean {
  try {
    execFileSync('cc', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
