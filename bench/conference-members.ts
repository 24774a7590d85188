/**
 * Synthetic conference members for `npm run bench:conference` (bench/conference.ts), in a process
 * of their own: each member is a UDP socket that sends a 20 ms PCMU frame every 20 ms and counts
 * what it gets back. A member talks quietly but for one loud frame (a burst) once a second, the
 * members of a group taking turns (a group is a room, or a pair relayed by rtpengine), so that a
 * burst heard by another member of its group gives the delay from send to hearing; RTP sequence
 * numbers give the loss.
 *
 * Driven over IPC: {op:'open', count} → {ports}; {op:'run', targets, groups, seconds} → the figures.
 */
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { decodeG711 } from '../src/telephony/media/g711.js';
import { writeRtpHeader } from '../src/telephony/media/rtp.js';
import { seeded } from '../test/seeded.js';
import {
  burstSlot,
  CYCLE,
  FRAME,
  LOUD,
  loudFrame,
  phaseIndexes,
  type SendPhases,
  voice,
} from './conference-voices.js';

interface Member {
  socket: dgram.Socket;
  group: number;
  /** Position in its group: the tick of the cycle it bursts at. */
  slot: number;
  voice: Uint8Array[];
  packet: Buffer;
  target?: { address: string; port: number };
  sequence: number;
  ssrc: number;
  received: number;
  firstSeq: number | undefined;
  lastSeq: number;
  wraps: number;
  loud: boolean;
  delays: number[];
}

const members: Member[] = [];
/** Per group: the recent bursts, newest last (member index, send time in ms). */
const bursts = new Map<number, { member: number; at: number }[]>();
let measuring = false;

function received(index: number, data: Buffer): void {
  const member = members[index]!;
  if (data.length < 12 + FRAME || !measuring) return;
  const seq = data.readUInt16BE(2);
  if (member.firstSeq === undefined) {
    member.firstSeq = seq;
    member.lastSeq = seq;
  } else {
    // Forward steps (with the 16-bit wrap); a late or repeated packet does not move the end.
    const step = (seq - member.lastSeq + 0x10000) & 0xffff;
    if (step > 0 && step < 0x8000) {
      if (seq < member.lastSeq) member.wraps++;
      member.lastSeq = seq;
    }
  }
  member.received++;
  const pcm = new Int16Array(FRAME);
  decodeG711(new Uint8Array(data.buffer, data.byteOffset + 12, FRAME), 0, pcm);
  let sum = 0;
  for (let i = 0; i < FRAME; i++) sum += Math.abs(pcm[i]!);
  const loud = sum / FRAME > LOUD;
  if (loud && !member.loud) {
    // The newest burst of another member of the group sent before now.
    const now = performance.now();
    const recent = bursts.get(member.group) ?? [];
    for (let i = recent.length - 1; i >= 0; i--) {
      const burst = recent[i]!;
      if (burst.member !== index && burst.at <= now) {
        member.delays.push(now - burst.at);
        break;
      }
    }
  }
  member.loud = loud;
}

async function open(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    const socket = dgram.createSocket('udp4');
    const index = members.length;
    members.push({
      socket,
      group: 0,
      slot: 0,
      voice: voice(0),
      packet: Buffer.alloc(12 + FRAME),
      sequence: Math.floor(Math.random() * 0xffff),
      ssrc: Math.floor(Math.random() * 0xffffffff),
      received: 0,
      firstSeq: undefined,
      lastSeq: 0,
      wraps: 0,
      loud: false,
      delays: [],
    });
    socket.on('message', (data) => received(index, data));
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    ports.push(socket.address().port);
  }
  return ports;
}

async function run(
  targets: { address: string; port: number }[],
  groups: number[][],
  seconds: number,
  warmup: number,
  sendPhases: SendPhases,
  seed: number | undefined,
) {
  const random = seed === undefined ? Math.random : seeded(seed);
  const { phases: PHASES, indexes: phaseOf } = phaseIndexes(members.length, sendPhases, random);
  const SUB_MS = 20 / PHASES;
  const byPhase: number[][] = Array.from({ length: PHASES }, () => []);
  phaseOf.forEach((phase, i) => {
    byPhase[phase]!.push(i);
  });
  groups.forEach((group, g) => {
    group.forEach((index, position) => {
      const member = members[index]!;
      member.group = g;
      member.slot = burstSlot(position, group.length);
      member.voice = voice(position);
    });
  });
  targets.forEach((target, i) => {
    members[i]!.target = target;
  });
  const started = performance.now();
  // When in the 20 ms of the machine's clock (epoch ms, the same in every process) each member sends.
  const sendPhase = phaseOf.map((phase) => (performance.timeOrigin + started + phase * SUB_MS) % 20);
  // Members send at PHASES offsets within the 20 ms (sendPhases), as peers of real calls do.
  let sub = 0;
  const cpuBefore = process.cpuUsage();
  let sent = 0;
  let late = 0;
  await new Promise<void>((resolve) => {
    const step = () => {
      const now = performance.now();
      // Catch up on sub-ticks missed by a late timer (every member still sends one frame per tick).
      while (started + sub * SUB_MS <= now) {
        const tick = Math.floor(sub / PHASES);
        const phase = sub % PHASES;
        if (sub === Math.round((warmup * 1000) / SUB_MS)) measuring = true;
        if (now - (started + sub * SUB_MS) > 20) late++;
        for (const i of byPhase[phase]!) {
          const member = members[i]!;
          if (!member.target) continue;
          const burst = tick % CYCLE === member.slot;
          // Each member its own buffer: a datagram's data is read when it leaves, not at send().
          const packet = member.packet;
          writeRtpHeader(packet, 0, false, member.sequence++, (member.sequence * FRAME) >>> 0, member.ssrc);
          packet.set(burst ? loudFrame : member.voice[tick % CYCLE]!, 12);
          if (burst) {
            const recent = bursts.get(member.group) ?? [];
            bursts.set(member.group, recent);
            recent.push({ member: i, at: performance.now() });
            if (recent.length > 8) recent.shift();
          }
          member.socket.send(packet, member.target.port, member.target.address);
          sent++;
        }
        sub++;
      }
      if (now - started >= (seconds + warmup) * 1000) {
        measuring = false;
        resolve();
        return;
      }
      setTimeout(step, Math.max(0, started + sub * SUB_MS - performance.now()));
    };
    step();
  });
  const cpu = process.cpuUsage(cpuBefore);
  // Let the last packets in flight arrive.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return {
    sent,
    lateTicks: late,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    members: members.map((member, i) => ({
      sendPhase: sendPhase[i]!,
      received: member.received,
      expected:
        member.firstSeq === undefined ? 0 : member.wraps * 0x10000 + member.lastSeq - member.firstSeq + 1,
      delays: member.delays,
    })),
  };
}

process.on('message', (message: { op: string; [key: string]: unknown }) => {
  void (async () => {
    if (message.op === 'open') process.send!({ ports: await open(message.count as number) });
    else if (message.op === 'run')
      process.send!(
        await run(
          message.targets as { address: string; port: number }[],
          message.groups as number[][],
          message.seconds as number,
          message.warmup as number,
          message.phases as SendPhases,
          message.seed as number | undefined,
        ),
      );
    else if (message.op === 'reset') {
      for (const member of members) {
        member.received = 0;
        member.firstSeq = undefined;
        member.wraps = 0;
        member.delays = [];
        member.target = undefined;
      }
      bursts.clear();
      process.send!({ ok: true });
    } else if (message.op === 'exit') process.exit(0);
  })();
});
