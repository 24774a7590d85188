/**
 * The fax benchmark's far end (bench/fax.ts), in a process of its own so that the Zentrale
 * node's CPU is its own: the carrier stand-in of the real-call tests (test/carrier.ts) places
 * calls to fax numbers and runs T.30 as the sending fax machine (spandsp), optionally losing a
 * share of the RTP packets both ways (a seeded generator: the same run loses the same packets).
 */
import type dgram from 'node:dgram';
import type { TestContext } from 'node:test';
import type { MediaEndpoint } from '../src/telephony/media/index.js';
import { startCarrier } from '../test/carrier.js';
import { announceReady, serveCommands } from './child.js';

const cleanups: (() => unknown)[] = [];
const context = { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext;
const carrier = await startCarrier(context);

/** Park–Miller: the loss pattern of a seed. */
function seeded(seed: number): () => number {
  let state = seed % 2147483647 || 1;
  return () => {
    state = (state * 16807) % 2147483647;
    return state / 2147483647;
  };
}

/** Drops `loss` of the endpoint's packets in each direction (the endpoint's own socket). */
function lossy(endpoint: MediaEndpoint, loss: number, seed: number): void {
  if (loss <= 0) return;
  const random = seeded(seed);
  const socket = (endpoint as unknown as { socket: dgram.Socket }).socket;
  const send = socket.send.bind(socket) as (...args: unknown[]) => void;
  (socket as unknown as { send: (...args: unknown[]) => void }).send = (...args) => {
    if (random() >= loss) send(...args);
  };
  const listeners = socket.listeners('message') as ((...args: unknown[]) => void)[];
  socket.removeAllListeners('message');
  socket.on('message', (...args: unknown[]) => {
    if (random() < loss) return;
    for (const listener of listeners) listener(...args);
  });
}

serveCommands(
  {
    async send(command) {
      const { kamailio, from, to, txFile, ecm, loss, seed } = command as unknown as {
        kamailio: string;
        from: string;
        to: string;
        txFile: string;
        ecm: boolean;
        loss: number;
        seed: number;
      };
      const started = performance.now();
      const caller = await carrier.dial(kamailio, from, to, 600);
      if (caller.status !== 200) return { status: caller.status, code: -1, pages: 0, pageTimes: [] };
      lossy(caller.leg.endpoint, loss, seed);
      const pageTimes: number[] = [];
      const machine = caller.leg.endpoint.fax({ caller: true, ident: from, ecm, txFile }, () =>
        pageTimes.push(performance.now() - started),
      );
      const result = await machine.done;
      await caller.leg.hangup().catch(() => {});
      return {
        status: caller.status,
        code: result.code,
        text: result.text,
        pages: result.pagesTransferred,
        bitRate: result.bitRate,
        ecm: result.ecm,
        encoding: result.encoding,
        imageBytes: result.imageBytes,
        pageTimes,
        ms: performance.now() - started,
      };
    },
  },
  async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  },
);
announceReady({ uri: carrier.uri });
