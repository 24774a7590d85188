/**
 * SIP transactions (RFC 3261 section 17 with the RFC 6026 "Accepted" state): INVITE and
 * non-INVITE client transactions (17.1.1 timers A, B, D; 17.1.2 timers E, F, K) and server
 * transactions (17.2.1 timers G, H, I and RFC 6026 timer L; 17.2.2 timer J), matching by Via
 * branch (17.1.3, 17.2.3). Retransmission timers run over UDP only (17.1.1.2: reliable
 * transports set them to zero). The table of live transactions is bounded.
 */
import { randomBytes } from 'node:crypto';
import {
  buildResponse,
  Headers,
  parseCSeq,
  parseVia,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from './message.js';
import type { Remote, SipTransport } from './transport.js';

export interface TimerSettings {
  /** RTT estimate (500 ms in RFC 3261). */
  t1: number;
  /** Longest retransmit interval for non-INVITE requests and INVITE responses (4 s). */
  t2: number;
  /** How long a message may stay in the network (5 s). */
  t4: number;
}

export const DEFAULT_TIMERS: TimerSettings = { t1: 500, t2: 4000, t4: 5000 };

const MAGIC = 'z9hG4bK';
const branchPrefix = `${MAGIC}${randomBytes(6).toString('hex')}`;
let branchCounter = 0;

export function newBranch(): string {
  branchCounter = (branchCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${branchPrefix}.${branchCounter.toString(36)}`;
}

function topViaBranch(message: SipMessage): { branch: string; sentBy: string } | undefined {
  const value = message.headers.get('via');
  const via = value ? parseVia(value) : undefined;
  if (!via) return undefined;
  return { branch: via.params.get('branch') ?? '', sentBy: `${via.host}:${via.port ?? 5060}` };
}

function cseqMethod(message: SipMessage): string {
  return parseCSeq(message.headers.get('cseq') ?? '')?.method.toUpperCase() ?? '';
}

/** 17.2.3: branch with the magic cookie, sent-by and method (ACK and CANCEL aside). */
function serverKey(request: SipRequest, methodOverride?: string): string | undefined {
  const top = topViaBranch(request);
  if (!top) return undefined;
  const method = methodOverride ?? (request.method === 'ACK' ? 'INVITE' : request.method);
  if (top.branch.startsWith(MAGIC)) return `${top.branch}|${top.sentBy}|${method}`;
  // RFC 2543 peers: Call-ID, CSeq number, From tag and top Via identify the transaction.
  const seq = parseCSeq(request.headers.get('cseq') ?? '')?.seq ?? 0;
  return `${request.headers.get('call-id')}|${seq}|${request.headers.get('from')}|${request.headers.get('via')}|${method}`;
}

/** The timers of one transaction, all cleared together when it ends. */
abstract class TimedTransaction {
  private timers: NodeJS.Timeout[] = [];

  protected after(ms: number, fn: () => void): void {
    this.timers.push(setTimeout(fn, ms));
  }

  protected clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
  }
}

type ServerState = 'trying' | 'proceeding' | 'completed' | 'confirmed' | 'accepted' | 'terminated';

export class ServerTransaction extends TimedTransaction {
  state: ServerState;
  private last: SipResponse | undefined;
  /** Called once when this transaction ends without the ACK its failure response wanted. */
  onTerminated: (() => void) | undefined;

  constructor(
    private readonly layer: TransactionLayer,
    readonly key: string,
    readonly request: SipRequest,
    readonly remote: Remote,
  ) {
    super();
    this.state = request.method === 'INVITE' ? 'proceeding' : 'trying';
  }

  get isInvite(): boolean {
    return this.request.method === 'INVITE';
  }

  get finalSent(): boolean {
    return this.last !== undefined && this.last.status >= 200;
  }

  /** Builds a response copying the request's headers (8.2.6). */
  response(status: number, reason?: string, toTag?: string): SipResponse {
    return buildResponse(this.request, status, reason, toTag);
  }

  respond(response: SipResponse): void {
    if (this.state === 'terminated' || this.state === 'completed' || this.state === 'confirmed') return;
    if (this.state === 'accepted' && response.status < 300) {
      // The UA core retransmits its 2xx through here (RFC 6026 section 8.7).
      this.layer.transport.send(response, this.remote);
      return;
    }
    if (this.state === 'accepted') return;
    this.last = response;
    this.layer.transport.send(response, this.remote);
    const { t1, t2 } = this.layer.timers;
    const udp = this.remote.transport === 'udp';
    if (response.status < 200) {
      if (this.state === 'trying') this.state = 'proceeding';
      return;
    }
    if (!this.isInvite) {
      this.state = 'completed';
      this.after(udp ? 64 * t1 : 0, () => this.terminate());
      return;
    }
    if (response.status < 300) {
      this.state = 'accepted';
      this.after(64 * t1, () => this.terminate());
      return;
    }
    this.state = 'completed';
    if (udp) {
      let interval = t1;
      const retransmit = () => {
        if (this.state !== 'completed') return;
        this.layer.transport.send(response, this.remote);
        interval = Math.min(interval * 2, t2);
        this.after(interval, retransmit);
      };
      this.after(interval, retransmit);
    }
    this.after(64 * t1, () => {
      if (this.state === 'completed') this.onTerminated?.();
      this.terminate();
    });
  }

  /** A retransmitted request or the ACK of a failure response. */
  receive(request: SipRequest): void {
    if (request.method === 'ACK') {
      if (this.state !== 'completed') return;
      this.state = 'confirmed';
      this.clear();
      this.after(this.remote.transport === 'udp' ? this.layer.timers.t4 : 0, () => this.terminate());
      return;
    }
    if ((this.state === 'proceeding' || this.state === 'completed') && this.last) {
      this.layer.transport.send(this.last, this.remote);
    }
  }

  terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.clear();
    this.layer.forgetServer(this);
  }
}

type ClientState = 'calling' | 'trying' | 'proceeding' | 'accepted' | 'completed' | 'terminated';

export interface ClientHandlers {
  onResponse(response: SipResponse): void;
  /** Timer B or F fired, or the transport failed: the TU sees a 408 (8.1.3.1). */
  onTimeout(): void;
}

export class ClientTransaction extends TimedTransaction {
  state: ClientState;
  private ack: SipRequest | undefined;

  constructor(
    private readonly layer: TransactionLayer,
    readonly key: string,
    readonly request: SipRequest,
    readonly remote: Remote,
    private readonly handlers: ClientHandlers,
  ) {
    super();
    this.state = request.method === 'INVITE' ? 'calling' : 'trying';
  }

  start(): void {
    const { t1, t2 } = this.layer.timers;
    this.layer.transport.send(this.request, this.remote);
    const invite = this.request.method === 'INVITE';
    if (this.remote.transport === 'udp') {
      let interval = t1;
      const retransmit = () => {
        const waiting = invite
          ? this.state === 'calling'
          : this.state === 'trying' || this.state === 'proceeding';
        if (!waiting) return;
        this.layer.transport.send(this.request, this.remote);
        interval = invite ? interval * 2 : this.state === 'proceeding' ? t2 : Math.min(interval * 2, t2);
        this.after(interval, retransmit);
      };
      this.after(interval, retransmit);
    }
    this.after(64 * t1, () => {
      const pending = invite
        ? this.state === 'calling'
        : this.state === 'trying' || this.state === 'proceeding';
      if (!pending) return;
      this.terminate();
      this.handlers.onTimeout();
    });
  }

  receive(response: SipResponse): void {
    const { t1, t4 } = this.layer.timers;
    const udp = this.remote.transport === 'udp';
    if (this.state === 'terminated') return;
    if (response.status < 200) {
      if (this.state === 'calling' || this.state === 'trying') this.state = 'proceeding';
      if (this.state === 'proceeding') this.handlers.onResponse(response);
      return;
    }
    if (this.request.method !== 'INVITE') {
      if (this.state === 'completed') return;
      this.state = 'completed';
      this.clear();
      this.after(udp ? t4 : 0, () => this.terminate());
      this.handlers.onResponse(response);
      return;
    }
    if (response.status < 300) {
      // RFC 6026: further 2xx go to the TU too, which ACKs each one.
      if (this.state !== 'accepted') {
        this.state = 'accepted';
        this.clear();
        this.after(64 * t1, () => this.terminate());
      }
      this.handlers.onResponse(response);
      return;
    }
    if (this.state === 'completed') {
      if (this.ack) this.layer.transport.send(this.ack, this.remote);
      return;
    }
    if (this.state === 'accepted') return;
    this.state = 'completed';
    this.clear();
    this.ack = this.buildAck(response);
    this.layer.transport.send(this.ack, this.remote);
    this.after(udp ? 32_000 : 0, () => this.terminate());
    this.handlers.onResponse(response);
  }

  /** 17.1.1.3: the ACK for a failure response belongs to the INVITE's transaction. */
  private buildAck(response: SipResponse): SipRequest {
    const headers = new Headers();
    headers.add('via', this.request.headers.get('via')!);
    for (const route of this.request.headers.getAll('route')) headers.add('route', route);
    headers.add('max-forwards', '70');
    headers.add('from', this.request.headers.get('from')!);
    headers.add('to', response.headers.get('to')!);
    headers.add('call-id', this.request.headers.get('call-id')!);
    const seq = parseCSeq(this.request.headers.get('cseq')!)!.seq;
    headers.add('cseq', `${seq} ACK`);
    return { type: 'request', method: 'ACK', uri: this.request.uri, headers, body: Buffer.alloc(0) };
  }

  terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.clear();
    this.layer.forgetClient(this);
  }
}

export interface TransactionUser {
  /** A request that starts a new server transaction, or an ACK for a 2xx (no transaction). */
  onRequest(request: SipRequest, transaction: ServerTransaction | undefined, remote: Remote): void;
  /** A response no client transaction matches (a 2xx retransmitted after the transaction ended). */
  onStrayResponse(response: SipResponse, remote: Remote): void;
}

export class TransactionLayer {
  private readonly servers = new Map<string, ServerTransaction>();
  private readonly clients = new Map<string, ClientTransaction>();
  private user: TransactionUser | undefined;

  constructor(
    readonly transport: SipTransport,
    readonly timers: TimerSettings = DEFAULT_TIMERS,
    private readonly maxTransactions = 100_000,
  ) {
    transport.onMessage((message, remote) => this.receive(message, remote));
  }

  setUser(user: TransactionUser): void {
    this.user = user;
  }

  get size(): number {
    return this.servers.size + this.clients.size;
  }

  private receive(message: SipMessage, remote: Remote): void {
    if (message.type === 'response') {
      const top = topViaBranch(message);
      const client = top && this.clients.get(`${top.branch}|${cseqMethod(message)}`);
      if (client) client.receive(message);
      else this.user?.onStrayResponse(message, remote);
      return;
    }
    const key = serverKey(message);
    if (!key) return;
    const existing = this.servers.get(key);
    if (existing) {
      existing.receive(message);
      return;
    }
    if (message.method === 'ACK') {
      this.user?.onRequest(message, undefined, remote);
      return;
    }
    const transaction = new ServerTransaction(this, key, message, remote);
    if (this.size >= this.maxTransactions) {
      // Overload (RFC 3261 21.5.4): refuse rather than grow.
      transaction.respond(transaction.response(503));
      return;
    }
    this.servers.set(key, transaction);
    this.user?.onRequest(message, transaction, remote);
  }

  /** The INVITE server transaction a CANCEL refers to (9.2: same branch, method INVITE). */
  findInviteFor(cancel: SipRequest): ServerTransaction | undefined {
    const key = serverKey(cancel, 'INVITE');
    return key ? this.servers.get(key) : undefined;
  }

  /** Starts a client transaction; the request's top Via must carry a fresh branch. */
  send(request: SipRequest, remote: Remote, handlers: ClientHandlers): ClientTransaction {
    const top = topViaBranch(request)!;
    const key = `${top.branch}|${request.method === 'ACK' ? 'INVITE' : request.method}`;
    const transaction = new ClientTransaction(this, key, request, remote, handlers);
    this.clients.set(key, transaction);
    transaction.start();
    return transaction;
  }

  forgetServer(transaction: ServerTransaction): void {
    if (this.servers.get(transaction.key) === transaction) this.servers.delete(transaction.key);
  }

  forgetClient(transaction: ClientTransaction): void {
    if (this.clients.get(transaction.key) === transaction) this.clients.delete(transaction.key);
  }

  close(): void {
    for (const transaction of [...this.servers.values()]) transaction.terminate();
    for (const transaction of [...this.clients.values()]) transaction.terminate();
  }
}
