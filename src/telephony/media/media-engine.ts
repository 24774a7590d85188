/**
 * The media engine: RTP ports from a configured range (even ports, RFC 3550 11: RTCP would take
 * the odd one above), the one send clock, and the endpoints alive. No globals: the call engine
 * makes one and passes it where needed.
 */
import dgram from 'node:dgram';
import { MediaClock, type Tickable } from './clock.js';
import { MediaEndpoint } from './media-endpoint.js';

export interface MediaEngineOptions {
  /** Address the RTP sockets bind to and SDP announces; default 127.0.0.1. */
  address?: string;
  /** Port range, inclusive; default 31000..31999 (kept apart from rtpengine's range). */
  portMin?: number;
  portMax?: number;
}

export class MediaEngine {
  readonly address: string;
  readonly portMin: number;
  readonly portMax: number;
  private readonly clock = new MediaClock();
  private readonly endpoints = new Map<number, MediaEndpoint>();
  private nextPort: number;

  constructor(options: MediaEngineOptions = {}) {
    this.address = options.address ?? '127.0.0.1';
    this.portMin = options.portMin ?? 31000;
    this.portMax = options.portMax ?? 31999;
    if (this.portMin < 1024 || this.portMax > 65534 || this.portMax <= this.portMin) {
      throw new Error(`bad RTP port range ${this.portMin}..${this.portMax}`);
    }
    this.nextPort = this.portMin + (this.portMin % 2);
  }

  get endpointCount(): number {
    return this.endpoints.size;
  }

  /** A new endpoint on the next free even port; throws when the range is exhausted. */
  async createEndpoint(): Promise<MediaEndpoint> {
    const span = Math.floor((this.portMax - this.portMin + 1) / 2);
    for (let attempt = 0; attempt < span; attempt++) {
      const port = this.nextPort;
      this.nextPort += 2;
      if (this.nextPort > this.portMax) this.nextPort = this.portMin + (this.portMin % 2);
      if (this.endpoints.has(port)) continue;
      const socket = await this.bind(port);
      if (!socket) continue;
      const endpoint = new MediaEndpoint(socket, this.address, port, (done) => {
        this.clock.remove(done);
        this.endpoints.delete(port);
        socket.close();
      });
      this.endpoints.set(port, endpoint);
      this.clock.add(endpoint);
      return endpoint;
    }
    throw new Error('no free RTP port');
  }

  /** Runs `member` on the engine's 20 ms clock (a conference mixer); returns the off switch. */
  onClock(member: Tickable): () => void {
    this.clock.add(member);
    return () => this.clock.remove(member);
  }

  private bind(port: number): Promise<dgram.Socket | undefined> {
    return new Promise((resolve) => {
      const socket = dgram.createSocket('udp4');
      socket.once('error', () => {
        socket.close();
        resolve(undefined);
      });
      socket.bind(port, this.address, () => {
        socket.removeAllListeners('error');
        socket.on('error', () => {});
        resolve(socket);
      });
    });
  }

  close(): void {
    for (const endpoint of [...this.endpoints.values()]) endpoint.close();
  }
}
