/**
 * rtpengine's DTMF log (its option --dtmf-log-dest): one JSON datagram per key a party sends
 * as RFC 4733 events, also while rtpengine only forwards the packets, e.g.
 * `{"callid":"…","source_tag":"…","event":5,"duration":220,…}`. The media commands read the
 * caller's keys of the calls rtpengine relays from it (collect, call_dtmf: relayed-media.ts).
 */
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import type { DtmfEvent } from '../media/index.js';

/** RFC 4733 event codes 0..15. */
const DIGITS = '0123456789*#ABCD';

type Listener = (sourceTag: string, event: DtmfEvent) => void;

export class DtmfLog {
  readonly #listeners = new Map<string, Listener>();
  #closed = false;

  private constructor(private readonly socket: dgram.Socket) {
    socket.on('message', (data, remote) => {
      // Only rtpengine on this host writes here.
      if (remote.address === '127.0.0.1') this.#receive(data);
    });
    socket.on('error', () => {});
  }

  /** A socket on loopback for rtpengine to write to (`port`). */
  static async open(): Promise<DtmfLog> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return new DtmfLog(socket);
  }

  get port(): number {
    return (this.socket.address() as AddressInfo).port;
  }

  /** The keys of rtpengine's call `callId` (its Call-ID), with the tag of the party that sent each. */
  listen(callId: string, listener: Listener): () => void {
    this.#listeners.set(callId, listener);
    return () => {
      if (this.#listeners.get(callId) === listener) this.#listeners.delete(callId);
    };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#listeners.clear();
    this.socket.close();
  }

  #receive(data: Buffer): void {
    let entry: { callid?: unknown; source_tag?: unknown; event?: unknown; duration?: unknown };
    try {
      entry = JSON.parse(data.toString('utf8')) as typeof entry;
    } catch {
      return;
    }
    const digit = typeof entry.event === 'number' ? DIGITS[entry.event] : undefined;
    if (typeof entry.callid !== 'string' || typeof entry.source_tag !== 'string' || !digit) return;
    const durationMs = typeof entry.duration === 'number' ? entry.duration : 0;
    this.#listeners.get(entry.callid)?.(entry.source_tag, { digit, durationMs, source: 'rfc4733' });
  }
}
