/**
 * An INVITE Zentrale sends (RFC 3261 13.2 UAC: the 2xx acknowledged and its retransmissions
 * answered, a second fork's 2xx hung up, 9.1 CANCEL once a provisional response came, ringing
 * bounded by the user agent's ring timeout). The call's dialog and mid-dialog requests are
 * SipCall's (sip-call.ts).
 */
import { contactUri, Dialog, newTag, withoutTag } from './dialog.js';
import { getTag, Headers, type SipRequest, type SipResponse } from './message.js';
import { parseSdp, type SessionDescription } from './sdp.js';
import { ALLOW, type CallHost, type EndReason, SipCall } from './sip-call.js';
import { type ClientTransaction, newBranch } from './transaction.js';
import type { Remote } from './transport.js';

export interface InviteOptions {
  /** Request-URI and, unless `to` says otherwise, the To URI. */
  uri: string;
  to?: string;
  /** Our From URI; default sip:zentrale@<host>. */
  from?: string;
  fromDisplay?: string;
  sdp: string;
  headers?: [string, string][];
  /** Where to send; default the outbound proxy, else the Request-URI's host. */
  target?: Remote;
}

export interface InviteResult {
  status: number;
  reason: string;
}

/** An INVITE we sent. `result` settles with the final status; 2xx means the call is up. */
export class OutgoingCall extends SipCall {
  readonly result: Promise<InviteResult>;
  private settle!: (result: InviteResult) => void;
  private progressHandlers: ((status: number, sdp: SessionDescription | undefined) => void)[] = [];
  private readonly localTag = newTag();
  /** The final status once one came (0 when the call ended without one). */
  final: number | undefined;
  private provisional = false;
  private cancelRequested = false;
  private ack: { request: SipRequest; remote: Remote } | undefined;
  private ringTimer: NodeJS.Timeout | undefined;
  private transaction: ClientTransaction | undefined;
  readonly request: SipRequest;

  constructor(
    ua: CallHost,
    options: InviteOptions,
    private readonly target: Remote,
  ) {
    super(ua, `${newTag()}@zentrale`);
    this.result = new Promise((resolve) => {
      this.settle = resolve;
    });
    this.localSdp = options.sdp;
    const from = options.from ?? `sip:zentrale@${ua.transport.host}`;
    const headers = new Headers();
    headers.add(
      'via',
      `SIP/2.0/${target.transport.toUpperCase()} ${ua.transport.hostport};branch=${newBranch()};rport`,
    );
    headers.add('max-forwards', '70');
    headers.add(
      'from',
      `${options.fromDisplay ? `"${options.fromDisplay.replace(/"/g, '')}" ` : ''}<${from}>;tag=${this.localTag}`,
    );
    headers.add('to', `<${options.to ?? options.uri}>`);
    headers.add('call-id', this.callId);
    headers.add('cseq', '1 INVITE');
    headers.add('contact', ua.contact(target.transport));
    headers.add('allow', ALLOW);
    if (ua.options.userAgent) headers.add('user-agent', ua.options.userAgent);
    for (const [name, value] of options.headers ?? []) headers.add(name, value);
    headers.add('content-type', 'application/sdp');
    this.request = {
      type: 'request',
      method: 'INVITE',
      uri: options.uri,
      headers,
      body: Buffer.from(options.sdp),
    };
  }

  /** @internal */
  start(): void {
    this.transaction = this.ua.layer.send(this.request, this.target, {
      onResponse: (response) => this.receive(response),
      onTimeout: () => this.fail(408, 'Request Timeout'),
    });
    this.ringTimer = setTimeout(() => this.cancel(), this.ua.options.ringTimeoutSeconds * 1000);
  }

  onProgress(handler: (status: number, sdp: SessionDescription | undefined) => void): void {
    this.progressHandlers.push(handler);
  }

  private fail(status: number, reason: string): void {
    if (this.final !== undefined) return;
    this.final = status;
    clearTimeout(this.ringTimer);
    this.settle({ status, reason });
    this.finish(status === 487 ? 'cancel' : status === 408 ? 'timeout' : 'failed');
  }

  /** @internal every response of the INVITE transaction, and stray 2xx retransmissions. */
  receive(response: SipResponse): void {
    const sdp =
      response.body.length > 0 && (response.headers.get('content-type') ?? '').startsWith('application/sdp')
        ? parseSdp(response.body.toString())
        : undefined;
    if (response.status < 200) {
      if (response.status > 100) this.provisional = true;
      if (this.cancelRequested && response.status > 100) this.sendCancel();
      for (const handler of this.progressHandlers) handler(response.status, sdp);
      return;
    }
    if (response.status >= 300) {
      this.fail(response.status, response.reason);
      return;
    }
    const remoteTag = getTag(response.headers.get('to')) ?? '';
    if (this.dialog && this.dialog.state.remoteTag !== remoteTag) {
      // A second fork answered (13.2.2.4): acknowledge and hang it up.
      this.acknowledgeFork(response, remoteTag);
      return;
    }
    if (this.ack) {
      // A retransmitted 2xx: our ACK got lost (13.2.2.4).
      this.ua.transport.send(this.ack.request, this.ack.remote);
      return;
    }
    this.dialog = this.dialogFrom(response, remoteTag);
    this.ack = this.dialog.request(
      'ACK',
      this.ua.transport.hostport,
      this.ua.contact(this.target.transport),
      { seq: 1 },
    );
    this.ua.transport.send(this.ack.request, this.ack.remote);
    this.final = response.status;
    clearTimeout(this.ringTimer);
    this.remoteSdp = sdp;
    if (sdp) this.remoteSdpText = response.body.toString();
    this.ua.confirm(this);
    this.settle({ status: response.status, reason: response.reason });
    // CANCEL crossed the 200 (9.1): the call is up, so end it properly.
    if (this.cancelRequested) void this.bye();
  }

  private dialogFrom(response: SipResponse, remoteTag: string): Dialog {
    return new Dialog({
      callId: this.callId,
      localTag: this.localTag,
      remoteTag,
      localUri: withoutTag(this.request.headers.get('from')!),
      remoteUri: withoutTag(response.headers.get('to')!),
      remoteTarget: contactUri(response.headers.get('contact')) ?? this.request.uri,
      routeSet: response.headers.getAll('record-route').reverse(),
      localSeq: 1,
      remoteSeq: undefined,
      transport: this.target.transport,
    });
  }

  private acknowledgeFork(response: SipResponse, remoteTag: string): void {
    const fork = this.dialogFrom(response, remoteTag);
    const ack = fork.request('ACK', this.ua.transport.hostport, this.ua.contact(this.target.transport), {
      seq: 1,
    });
    this.ua.transport.send(ack.request, ack.remote);
    void this.ua.sendInDialog(fork, 'BYE').catch(() => {});
  }

  /** Before the answer a caller CANCELs (RFC 3261 15: BYE only on a confirmed dialog). */
  override async bye(): Promise<void> {
    if (this.final === undefined) this.cancel();
    else await super.bye();
  }

  /** CANCEL before the answer (9.1); sent once a provisional response arrived. */
  cancel(): void {
    if (this.final !== undefined || this.cancelRequested) return;
    this.cancelRequested = true;
    clearTimeout(this.ringTimer);
    if (this.provisional) this.sendCancel();
    // A peer that never answers the CANCEL with 487 would hold the INVITE transaction in
    // "proceeding" for ever (timer B stops there): give up after 64*T1 (RFC 3261 9.1).
    this.ringTimer = setTimeout(() => {
      this.transaction?.terminate();
      this.fail(408, 'Request Timeout');
    }, 64 * this.ua.timers.t1);
  }

  private sendCancel(): void {
    if (this.final !== undefined) return;
    const headers = new Headers();
    headers.add('via', this.request.headers.get('via')!);
    for (const route of this.request.headers.getAll('route')) headers.add('route', route);
    headers.add('max-forwards', '70');
    headers.add('from', this.request.headers.get('from')!);
    headers.add('to', this.request.headers.get('to')!);
    headers.add('call-id', this.callId);
    headers.add('cseq', '1 CANCEL');
    const cancel: SipRequest = {
      type: 'request',
      method: 'CANCEL',
      uri: this.request.uri,
      headers,
      body: Buffer.alloc(0),
    };
    this.ua.layer.send(cancel, this.target, { onResponse: () => {}, onTimeout: () => {} });
  }

  override finish(reason: EndReason): void {
    clearTimeout(this.ringTimer);
    if (this.final === undefined) {
      this.final = 0;
      this.settle({ status: 0, reason });
    }
    super.finish(reason);
  }
}
