/**
 * A fixed piece of work timed by this thread's CPU, for benches whose figures move with the
 * machine's state (bench/conference.ts): the same code on the same data each time, so a run that
 * finds the machine slower says so beside its figures. Two probes: a 10-member conference mix
 * (mixer.ts, user-space arithmetic) and a loopback UDP packet sent and received by node:dgram
 * (the kernel's and node's per-packet work, as the media worker does it).
 */
import dgram from 'node:dgram';
import { DEFAULT_MEMBER, Mixer } from '../src/telephony/media/mixer.js';
import { FRAME_SAMPLES } from '../src/telephony/media/sources.js';

export interface ProbeFigures {
  /** CPU µs of one mix of a room of 10 talkers. */
  readonly mixUs: number;
  /** CPU µs of one 172-byte packet sent and received over loopback. */
  readonly packetUs: number;
}

const threadCpuUs = () => {
  const usage = process.threadCpuUsage();
  return usage.user + usage.system;
};

function probeMix(mixes: number): number {
  const mixer = new Mixer();
  const frames = Array.from({ length: 10 }, (_, m) =>
    Int16Array.from({ length: FRAME_SAMPLES }, (_, i) => Math.round(8000 * Math.sin((i * (m + 3)) / 9))),
  );
  for (let m = 0; m < 10; m++) mixer.add(m, DEFAULT_MEMBER);
  const start = threadCpuUs();
  for (let n = 0; n < mixes; n++) {
    for (let m = 0; m < 10; m++) mixer.push(m, frames[m]!, n);
    mixer.mix(n);
  }
  return (threadCpuUs() - start) / mixes;
}

async function probePackets(packets: number): Promise<number> {
  const receiver = dgram.createSocket('udp4');
  const sender = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => receiver.bind(0, '127.0.0.1', resolve));
  const port = receiver.address().port;
  const packet = Buffer.alloc(172, 0x55);
  // Ten at a time, as a room's tick sends; the next ten once these are in (none lost to a full buffer).
  let sent = 0;
  const burst = () => {
    for (let i = 0; i < 10 && sent < packets; i++, sent++) sender.send(packet, port, '127.0.0.1');
  };
  let received = 0;
  const start = threadCpuUs();
  await new Promise<void>((resolve) => {
    receiver.on('message', () => {
      if (++received === packets) resolve();
      else if (received % 10 === 0) burst();
    });
    burst();
  });
  const used = threadCpuUs() - start;
  receiver.close();
  sender.close();
  return used / packets;
}

export async function machineProbe(): Promise<ProbeFigures> {
  probeMix(500);
  await probePackets(1000);
  return { mixUs: probeMix(20000), packetUs: await probePackets(40000) };
}

export function probeText(probe: ProbeFigures): string {
  return `probe: a 10-member mix ${probe.mixUs.toFixed(1)} µs, a loopback packet sent and received ${probe.packetUs.toFixed(1)} µs of CPU`;
}
