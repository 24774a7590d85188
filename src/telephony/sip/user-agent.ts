/**
 * Zentrale's SIP user agent (RFC 3261 sections 8 UA behaviour, 9 CANCEL, 12 dialogs, 13 and 14
 * INVITE and re-INVITE, 13.3.1.4 the 2xx retransmitted until ACK, 15 BYE, 11 OPTIONS; within a
 * dialog RFC 3311 UPDATE, RFC 3515 REFER, RFC 6086 INFO (in-dialog.ts); RFC 3891 Replaces on a
 * new INVITE; RFC 6665 NOTIFY sent). It answers and
 * originates the legs the call engine needs and knows nothing of HTTP or media: SDP goes in
 * and out as text, parsed with sdp.ts.
 */
import { type Dialog, dialogKey, newTag, remoteOfUri } from './dialog.js';
import { ALLOW, methodNotAllowed, parseReplaces, receiveInDialog, replacedKey } from './in-dialog.js';
import { getTag, Headers, parseCSeq, type SipRequest, type SipResponse } from './message.js';
import { type InviteOptions, OutgoingCall } from './outgoing-call.js';
import { IncomingCall, type SipCall } from './sip-call.js';
import {
  DEFAULT_TIMERS,
  newBranch,
  type ServerTransaction,
  type TimerSettings,
  TransactionLayer,
} from './transaction.js';
import { type Remote, SipTransport } from './transport.js';

// What callers of the user agent meet in its calls (the calls themselves: sip-call.ts).
export { type EndReason, IncomingCall, parseDtmfInfo } from './sip-call.js';

export interface SipUserAgentOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  tcp?: boolean;
  /** Where requests outside a dialog go (Kamailio); default: the Request-URI's host. */
  outboundProxy?: Remote;
  timers?: TimerSettings;
  /** Bound on concurrent dialogs; new INVITEs beyond it get 503. */
  maxDialogs?: number;
  /** Seconds an incoming INVITE may stay unanswered before the UA answers 408 itself. */
  inviteTimeoutSeconds?: number;
  /** Seconds an outgoing INVITE may ring before the UA cancels it. */
  ringTimeoutSeconds?: number;
  userAgent?: string;
}

interface ResolvedOptions extends SipUserAgentOptions {
  maxDialogs: number;
  inviteTimeoutSeconds: number;
  ringTimeoutSeconds: number;
}

/** A pending call's key: its side (the UA answers `in`, places `out`) and Call-ID. */
function pendingKey(call: SipCall): string {
  return `${call instanceof IncomingCall ? 'in' : 'out'} ${call.callId}`;
}

/** The user agent: one transport, its transactions, and the calls in progress. */
export class SipUserAgent {
  readonly options: ResolvedOptions;
  readonly transport: SipTransport;
  readonly layer: TransactionLayer;
  readonly timers: TimerSettings;
  /** Confirmed dialogs by Call-ID|local tag|remote tag. */
  private readonly dialogs = new Map<string, SipCall>();
  /**
   * Calls before their dialog is confirmed (for CANCEL and the first ACK), by side and Call-ID:
   * a call of this UA routed back to it (a platform number, decisions.md "Fax over the network")
   * is pending once as the caller and once as the callee under one Call-ID.
   */
  private readonly pending = new Map<string, SipCall>();
  private inviteHandler: ((call: IncomingCall) => void) | undefined;
  /** The ACK we sent for the 2xx of each dialog's last re-INVITE, sent again for a retransmitted 2xx. */
  private readonly acks = new Map<string, { seq: number; request: SipRequest; remote: Remote }>();

  private constructor(options: SipUserAgentOptions) {
    this.options = {
      maxDialogs: 10_000,
      inviteTimeoutSeconds: 180,
      ringTimeoutSeconds: 180,
      ...options,
    };
    this.timers = options.timers ?? DEFAULT_TIMERS;
    this.transport = new SipTransport({ host: options.host, port: options.port, tcp: options.tcp });
    this.layer = new TransactionLayer(this.transport, this.timers);
    this.layer.setUser({
      onRequest: (request, transaction, remote) => this.receive(request, transaction, remote),
      onStrayResponse: (response) => this.stray(response),
    });
  }

  static async start(options: SipUserAgentOptions): Promise<SipUserAgent> {
    const ua = new SipUserAgent(options);
    await ua.transport.listen();
    return ua;
  }

  get port(): number {
    return this.transport.port;
  }

  get callCount(): number {
    return this.dialogs.size + this.pending.size;
  }

  /** Our Contact header value. */
  contact(transport: 'udp' | 'tcp'): string {
    return `<sip:zentrale@${this.transport.hostport}${transport === 'tcp' ? ';transport=tcp' : ''}>`;
  }

  onInvite(handler: (call: IncomingCall) => void): void {
    this.inviteHandler = handler;
  }

  /** Originates a call (no authentication: Kamailio trusts Zentrale on loopback). */
  invite(options: InviteOptions): OutgoingCall {
    const target = options.target ?? this.options.outboundProxy ?? remoteOfUri(options.uri);
    if (!target) throw new Error(`not a SIP URI: ${options.uri}`);
    const call = new OutgoingCall(this, options, target);
    if (this.callCount >= this.options.maxDialogs) {
      call.finish('failed');
      return call;
    }
    this.pending.set(pendingKey(call), call);
    call.start();
    return call;
  }

  /** A request outside any dialog (OPTIONS, NOTIFY to a registered contact, MESSAGE). */
  request(options: {
    method: string;
    uri: string;
    from?: string;
    headers?: [string, string][];
    contentType?: string;
    body?: string;
    target?: Remote;
  }): Promise<SipResponse> {
    const target = options.target ?? this.options.outboundProxy ?? remoteOfUri(options.uri);
    if (!target) return Promise.reject(new Error(`not a SIP URI: ${options.uri}`));
    const headers = new Headers();
    headers.add(
      'via',
      `SIP/2.0/${target.transport.toUpperCase()} ${this.transport.hostport};branch=${newBranch()};rport`,
    );
    headers.add('max-forwards', '70');
    headers.add('from', `<${options.from ?? `sip:zentrale@${this.transport.host}`}>;tag=${newTag()}`);
    headers.add('to', `<${options.uri}>`);
    headers.add('call-id', `${newTag()}@zentrale`);
    headers.add('cseq', `1 ${options.method}`);
    headers.add('contact', this.contact(target.transport));
    for (const [name, value] of options.headers ?? []) headers.add(name, value);
    const body = Buffer.from(options.body ?? '');
    if (body.length > 0) headers.add('content-type', options.contentType ?? 'text/plain');
    const request: SipRequest = { type: 'request', method: options.method, uri: options.uri, headers, body };
    return this.transact(request, target);
  }

  /** An out-of-dialog NOTIFY (RFC 6665 with RFC 3265's unsolicited use, e.g. check-sync or MWI). */
  notify(options: {
    uri: string;
    event: string;
    subscriptionState?: string;
    contentType?: string;
    body?: string;
    target?: Remote;
  }): Promise<SipResponse> {
    return this.request({
      method: 'NOTIFY',
      uri: options.uri,
      headers: [
        ['event', options.event],
        ['subscription-state', options.subscriptionState ?? 'terminated'],
      ],
      contentType: options.contentType,
      body: options.body,
      target: options.target,
    });
  }

  private transact(request: SipRequest, target: Remote): Promise<SipResponse> {
    return new Promise((resolve) => {
      this.layer.send(request, target, {
        onResponse: (response) => {
          if (response.status >= 200) resolve(response);
        },
        onTimeout: () => {
          const timeout: SipResponse = {
            type: 'response',
            status: 408,
            reason: 'Request Timeout',
            headers: request.headers.clone(),
            body: Buffer.alloc(0),
          };
          resolve(timeout);
        },
      });
    });
  }

  /** @internal a request within `dialog`; the 2xx of a re-INVITE is acknowledged here (13.2.2.4). */
  async sendInDialog(
    dialog: Dialog,
    method: string,
    body?: Buffer,
    contentType?: string,
    headers?: [string, string][],
  ): Promise<SipResponse> {
    const contact = this.contact(dialog.state.transport);
    const { request, remote } = dialog.request(method, this.transport.hostport, contact, {
      body,
      contentType,
      headers,
    });
    const response = await this.transact(request, remote);
    if (method === 'INVITE' && response.status >= 200 && response.status < 300) {
      const seq = parseCSeq(request.headers.get('cseq')!)!.seq;
      const ack = dialog.request('ACK', this.transport.hostport, contact, { seq });
      this.acks.set(dialog.key, { seq, ...ack });
      this.transport.send(ack.request, ack.remote);
    }
    return response;
  }

  /** @internal the dialog is confirmed (2xx sent or received). */
  confirm(call: SipCall): void {
    this.pending.delete(pendingKey(call));
    if (call.dialog && !call.ended) this.dialogs.set(call.dialog.key, call);
  }

  /** @internal */
  forget(call: SipCall): void {
    if (this.pending.get(pendingKey(call)) === call) this.pending.delete(pendingKey(call));
    if (call.dialog && this.dialogs.get(call.dialog.key) === call) {
      this.dialogs.delete(call.dialog.key);
      this.acks.delete(call.dialog.key);
    }
  }

  private findDialog(request: SipRequest): SipCall | undefined {
    const callId = request.headers.get('call-id')!;
    const local = getTag(request.headers.get('to'));
    const remote = getTag(request.headers.get('from')) ?? '';
    if (!local) return undefined;
    return this.dialogs.get(dialogKey(callId, local, remote));
  }

  private receive(request: SipRequest, transaction: ServerTransaction | undefined, remote: Remote): void {
    if (request.method === 'ACK') {
      this.findDialog(request)?.acked();
      return;
    }
    if (!transaction) return;
    if (request.method === 'CANCEL') {
      const invite = this.layer.findInviteFor(request);
      if (!invite) {
        transaction.respond(transaction.response(481));
        return;
      }
      transaction.respond(transaction.response(200));
      const call = this.pending.get(`in ${request.headers.get('call-id')!}`);
      if (call instanceof IncomingCall) call.cancelled();
      return;
    }
    if (getTag(request.headers.get('to'))) {
      this.receiveInDialog(request, transaction);
      return;
    }
    switch (request.method) {
      case 'INVITE':
        this.receiveInvite(request, transaction, remote);
        return;
      case 'OPTIONS': {
        const response = transaction.response(200);
        response.headers.add('allow', ALLOW);
        response.headers.add('accept', 'application/sdp');
        transaction.respond(response);
        return;
      }
      case 'BYE':
      case 'INFO':
      case 'NOTIFY':
      case 'UPDATE':
      case 'REFER':
        transaction.respond(transaction.response(481));
        return;
      default:
        methodNotAllowed(transaction);
    }
  }

  private receiveInvite(request: SipRequest, transaction: ServerTransaction, remote: Remote): void {
    const callId = request.headers.get('call-id')!;
    if (this.pending.has(`in ${callId}`)) {
      // Merged request (8.2.2.2): same Call-ID, another branch, still in progress.
      transaction.respond(transaction.response(482, 'Loop Detected'));
      return;
    }
    if (!this.inviteHandler || this.callCount >= this.options.maxDialogs) {
      transaction.respond(transaction.response(this.inviteHandler ? 503 : 480));
      return;
    }
    const replacesHeader = request.headers.get('replaces');
    let replaced: SipCall | undefined;
    if (replacesHeader !== undefined) {
      // RFC 3891 3: a Replaces naming no confirmed dialog of ours is answered 481.
      const replaces = parseReplaces(replacesHeader);
      replaced = replaces && !replaces.earlyOnly ? this.dialogs.get(replacedKey(replaces)) : undefined;
      if (!replaced || replaced.ended) {
        transaction.respond(transaction.response(replaces ? 481 : 400));
        return;
      }
    }
    transaction.respond(transaction.response(100));
    const call = new IncomingCall(this, request, transaction, remote);
    call.replaces = replaced;
    this.pending.set(pendingKey(call), call);
    try {
      this.inviteHandler(call);
    } catch {
      call.reject(500);
    }
  }

  private receiveInDialog(request: SipRequest, transaction: ServerTransaction): void {
    const call = this.findDialog(request);
    if (!call?.dialog) {
      transaction.respond(transaction.response(481));
      return;
    }
    const cseq = parseCSeq(request.headers.get('cseq')!)!;
    if (!call.dialog.acceptsSequence(cseq.seq, request.method)) {
      transaction.respond(transaction.response(500, 'CSeq Out of Order'));
      return;
    }
    receiveInDialog(this, call, request, transaction);
  }

  private stray(response: SipResponse): void {
    if (response.status < 200 || response.status >= 300) return;
    if (parseCSeq(response.headers.get('cseq') ?? '')?.method !== 'INVITE') return;
    const callId = response.headers.get('call-id') ?? '';
    const local = getTag(response.headers.get('from')) ?? '';
    const remote = getTag(response.headers.get('to')) ?? '';
    const key = dialogKey(callId, local, remote);
    const ack = this.acks.get(key);
    if (ack && ack.seq === parseCSeq(response.headers.get('cseq') ?? '')?.seq) {
      // Our ACK for a re-INVITE's 2xx got lost: the peer retransmits the 2xx.
      this.transport.send(ack.request, ack.remote);
      return;
    }
    const call = this.dialogs.get(key) ?? this.pending.get(`out ${callId}`);
    if (call instanceof OutgoingCall) call.receive(response);
  }

  async close(): Promise<void> {
    for (const call of [...this.dialogs.values(), ...this.pending.values()]) call.finish('closed');
    this.layer.close();
    await this.transport.close();
  }
}
