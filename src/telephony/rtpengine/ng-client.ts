/**
 * rtpengine's ng control protocol (rtpengine docs, "ng Control Protocol"): each UDP datagram
 * is `<cookie> <bencoded dictionary>`, the answer carries the same cookie. A request that is
 * not answered in time is sent again with the same cookie (rtpengine answers a repeated
 * cookie from its cache, so a retransmission never runs a command twice); pending requests
 * are bounded so that a stalled daemon cannot make the client hold unbounded memory.
 */

import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { type Bencodable, type Decoded, decode, encode } from './bencode.js';

export type NgCommand = 'ping' | 'offer' | 'answer' | 'delete' | 'query' | 'list' | 'statistics' | string;

export type NgAnswer = { [key: string]: Decoded };

export class NgError extends Error {
  constructor(
    message: string,
    readonly reason: 'error' | 'timeout' | 'busy' | 'closed',
  ) {
    super(message);
  }
}

export interface NgClientOptions {
  host: string;
  port: number;
  /** Wait for an answer before sending again (ms). */
  retransmitAfter?: number;
  /** Sends in all, the first included. */
  attempts?: number;
  /** Requests in flight at most; beyond, `request` fails at once with reason `busy`. */
  maxPending?: number;
}

interface Pending {
  message: Buffer;
  attempts: number;
  timer: NodeJS.Timeout;
  resolve(answer: NgAnswer): void;
  reject(error: NgError): void;
}

export class NgClient {
  private readonly socket: dgram.Socket;
  private readonly pending = new Map<string, Pending>();
  private readonly prefix = randomBytes(4).toString('hex');
  private sequence = 0;
  private closed = false;
  private readonly retransmitAfter: number;
  private readonly attempts: number;
  private readonly maxPending: number;

  constructor(private readonly options: NgClientOptions) {
    this.retransmitAfter = options.retransmitAfter ?? 500;
    this.attempts = options.attempts ?? 4;
    this.maxPending = options.maxPending ?? 4096;
    this.socket = dgram.createSocket(options.host.includes(':') ? 'udp6' : 'udp4');
    this.socket.on('message', (data) => this.receive(data));
    // ICMP port unreachable while the daemon restarts: the retransmissions cover it.
    this.socket.on('error', () => {});
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Sends one command; resolves with the answer dictionary when `result` is not `error`. */
  request(command: NgCommand, parameters: { [key: string]: Bencodable | undefined } = {}): Promise<NgAnswer> {
    if (this.closed) return Promise.reject(new NgError('ng client closed', 'closed'));
    if (this.pending.size >= this.maxPending)
      return Promise.reject(new NgError(`${this.pending.size} ng requests pending`, 'busy'));
    this.sequence = (this.sequence + 1) % 0x7fffffff;
    const cookie = `${this.prefix}${this.sequence.toString(36)}`;
    const message = Buffer.concat([Buffer.from(`${cookie} `), encode({ ...parameters, command })]);
    return new Promise<NgAnswer>((resolve, reject) => {
      const entry: Pending = {
        message,
        attempts: 1,
        timer: setTimeout(() => this.retransmit(cookie), this.retransmitAfter),
        resolve,
        reject,
      };
      this.pending.set(cookie, entry);
      this.send(message);
    });
  }

  ping(): Promise<NgAnswer> {
    return this.request('ping');
  }

  offer(parameters: {
    'call-id': string;
    'from-tag': string;
    sdp: string;
    [key: string]: Bencodable | undefined;
  }) {
    return this.request('offer', parameters);
  }

  answer(parameters: {
    'call-id': string;
    'from-tag': string;
    'to-tag': string;
    sdp: string;
    [key: string]: Bencodable | undefined;
  }) {
    return this.request('answer', parameters);
  }

  delete(parameters: { 'call-id': string; 'from-tag'?: string; [key: string]: Bencodable | undefined }) {
    return this.request('delete', parameters);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const [cookie, entry] of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(new NgError('ng client closed', 'closed'));
      this.pending.delete(cookie);
    }
    this.socket.close();
  }

  private send(message: Buffer): void {
    this.socket.send(message, this.options.port, this.options.host);
  }

  private retransmit(cookie: string): void {
    const entry = this.pending.get(cookie);
    if (!entry) return;
    if (entry.attempts >= this.attempts) {
      this.pending.delete(cookie);
      entry.reject(new NgError(`rtpengine did not answer (${entry.attempts} attempts)`, 'timeout'));
      return;
    }
    entry.attempts += 1;
    entry.timer = setTimeout(() => this.retransmit(cookie), this.retransmitAfter);
    this.send(entry.message);
  }

  private receive(data: Buffer): void {
    const space = data.indexOf(0x20);
    if (space <= 0) return;
    const cookie = data.toString('latin1', 0, space);
    const entry = this.pending.get(cookie);
    if (!entry) return; // a late answer to a retransmitted or abandoned request
    this.pending.delete(cookie);
    clearTimeout(entry.timer);
    let answer: Decoded;
    try {
      answer = decode(data, space + 1).value;
    } catch (error) {
      entry.reject(new NgError(`malformed ng answer: ${(error as Error).message}`, 'error'));
      return;
    }
    if (typeof answer !== 'object' || Array.isArray(answer)) {
      entry.reject(new NgError('ng answer is not a dictionary', 'error'));
    } else if (answer.result === 'error') {
      entry.reject(new NgError(String(answer['error-reason'] ?? 'rtpengine error'), 'error'));
    } else {
      entry.resolve(answer);
    }
  }
}
