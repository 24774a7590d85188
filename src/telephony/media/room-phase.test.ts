import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { until } from '../../../test/helper.js';
import { phaseDistance, phaseOf } from './clock.js';
import { encodeG711 } from './g711.js';
import { MediaEngine } from './media-engine.js';
import { ALIGN_FRAMES, MediaRoom } from './media-room.js';
import {
  bestPhase,
  frameDue,
  LATE_WAIT_MS,
  lateEdge,
  lateEdges,
  longestWait,
  MIN_ARRIVALS,
  PHASE_MARGIN_MS,
  STEADY_MS,
} from './room-phase.js';
import { parseRtp, writeRtpHeader } from './rtp.js';

/** `count` arrivals around `phase`, spread evenly over ±`jitter` ms. */
function arrivals(phase: number, jitter = 0, count = 50): number[] {
  return Array.from({ length: count }, (_, i) => phaseOf(phase + jitter * ((2 * i) / (count - 1) - 1)));
}

test('phases wrap on the 20 ms circle', () => {
  assert.equal(phaseOf(23), 3);
  assert.equal(phaseOf(-1), 19);
  assert.equal(phaseDistance(19, 1), 2);
  assert.equal(phaseDistance(1, 19), -2);
  assert.equal(phaseDistance(3, 13), -10);
});

test("a member's late edge is its mean phase plus its jitter, across the wrap", () => {
  assert.ok(Math.abs(lateEdge(arrivals(5))! - 5) < 1e-9);
  // Jitter ±1 ms: the room waits for 95 % of the frames, so nearly the whole +1 ms.
  const edge = lateEdge(arrivals(5, 1))!;
  assert.ok(edge > 5.8 && edge <= 6, `${edge}`);
  // Arrivals either side of the wrap (19.5 … 0.5) have their mean at 0, not at 10.
  const wrapped = lateEdge(arrivals(0, 0.5))!;
  assert.ok(phaseDistance(0, wrapped) > 0.3 && phaseDistance(0, wrapped) <= 0.5, `${wrapped}`);
  assert.equal(lateEdge(arrivals(5, 0, MIN_ARRIVALS - 1)), undefined);
});

/** The phase a room picks for its members' arrivals, as media-room.ts does. */
const roomPhase = (members: readonly (readonly number[])[]) => bestPhase(lateEdges(members));

/** Equal within floating point (the circular mean is computed with sin and cos). */
function near(actual: number | undefined, expected: number): void {
  assert.ok(
    actual !== undefined && Math.abs(phaseDistance(expected, actual)) < 1e-6,
    `${actual} ≠ ${expected}`,
  );
}

test('the room ticks after the latest arrival before the largest gap', () => {
  // Late edges 2, 3 and 12: the gap 12 → 2 (10 ms) is the largest, so tick just after 12: the
  // longest wait is then 11 ms (the member at 2), where a fixed phase can make it 20.
  near(roomPhase([arrivals(2), arrivals(3), arrivals(12)]), 12 + PHASE_MARGIN_MS);
  // One member: just after it.
  near(roomPhase([arrivals(7)]), 7 + PHASE_MARGIN_MS);
  // Across the wrap: edges 18.5 and 1; the largest gap is 1 → 18.5, so tick after 1.
  near(roomPhase([arrivals(18.5), arrivals(1)]), 1 + PHASE_MARGIN_MS);
  // Members who have not sent enough do not count; none: no phase.
  near(roomPhase([arrivals(4), arrivals(15, 0, 3)]), 4 + PHASE_MARGIN_MS);
  assert.equal(roomPhase([arrivals(4, 0, 3)]), undefined);
  assert.equal(roomPhase([]), undefined);
});

test('the longest wait: from each late edge to the tick, round the circle', () => {
  assert.equal(longestWait([2, 3, 12], 13), 11);
  // A tick just before a member's frames makes it wait nearly a whole frame.
  assert.equal(longestWait([2, 3, 12], 11), 19);
  assert.equal(longestWait([], 5), 0);
});

test('the room waits after its tick only for a frame due by the deadline and not queued', () => {
  const now = 1000;
  const deadline = now + LATE_WAIT_MS;
  // Its last frame came 19 ms ago: the next is due in 1 ms, within the wait.
  assert.equal(frameDue(now, deadline, now - 19, false), true);
  // Overdue (jitter): still waited for, until the deadline.
  assert.equal(frameDue(now, deadline, now - 22, false), true);
  // Already queued, or due only after the deadline (its phase is later in the 20 ms): no wait.
  assert.equal(frameDue(now, deadline, now - 19, true), false);
  assert.equal(frameDue(now, deadline, now - 10, false), false);
  // Not sending steadily (on hold, or never sent): no wait.
  assert.equal(frameDue(now, deadline, now - STEADY_MS - 1, false), false);
  assert.equal(frameDue(now, deadline, Number.NEGATIVE_INFINITY, false), false);
});

test('a room moves its clock to just after its members arrive, and a member who leaves goes on sending', async (t) => {
  const base = 35000 + Math.floor(Math.random() * 500) * 2;
  const engine = new MediaEngine({ portMin: base, portMax: base + 20 });
  const room = new MediaRoom(engine);
  const peers: dgram.Socket[] = [];
  t.after(() => {
    room.close();
    engine.close();
    for (const peer of peers) peer.close();
  });
  const endpoints = [await engine.createEndpoint(), await engine.createEndpoint()];
  const received = endpoints.map(() => ({ packets: 0 }));
  for (const [i, endpoint] of endpoints.entries()) {
    const peer = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', resolve));
    peer.on('message', (data) => {
      if (parseRtp(data)) received[i]!.packets++;
    });
    endpoint.setRemote({ address: '127.0.0.1', port: peer.address().port, payloadType: 0 });
    room.join(i + 1, endpoint);
    peers.push(peer);
  }
  // The peers send in the middle between two of the room's ticks: the worst place, a 10 ms wait.
  const start = room.phase!;
  const sendPhase = phaseOf(start + 10);
  const payload = new Uint8Array(160);
  encodeG711(new Int16Array(160).fill(1000), 0, payload);
  let sequence = 0;
  let timer: NodeJS.Timeout | undefined;
  const first = performance.now() + 20 + phaseOf(sendPhase - performance.now());
  const send = () => {
    for (const [i, peer] of peers.entries()) {
      const packet = Buffer.alloc(172);
      writeRtpHeader(packet, 0, false, sequence, sequence * 160, 1000 + i);
      packet.set(payload, 12);
      peer.send(packet, endpoints[i]!.port, '127.0.0.1');
    }
    sequence++;
    timer = setTimeout(send, Math.max(0, first + sequence * 20 - performance.now()));
  };
  timer = setTimeout(send, first - performance.now());
  t.after(() => clearTimeout(timer));
  // Within a few alignment windows the room ticks just after the arrivals (it started 10 ms
  // before them, the farthest a phase can be); the timers' lateness and the margin put it a
  // little after the send phase (under load, several ms).
  await until(
    () => {
      const phase = room.phase;
      return (
        phase !== undefined && phaseDistance(sendPhase, phase) >= 0 && phaseDistance(sendPhase, phase) < 9.5
      );
    },
    'the room ticks after the arrivals',
    ALIGN_FRAMES * 20 * 5,
  );
  assert.ok(Math.abs(phaseDistance(start, room.phase!)) > 2, 'the clock moved');
  // Each member's mix went out on the room's clock.
  assert.ok(received[0]!.packets >= ALIGN_FRAMES / 2 && received[1]!.packets >= ALIGN_FRAMES / 2);
  // A member who leaves is back on the engine's clock: its endpoint keeps sending frames.
  room.leave(1);
  void endpoints[0]!.tone(1000);
  const before = received[0]!.packets;
  await until(() => received[0]!.packets >= before + 10, 'frames after leaving', 5000);
});
