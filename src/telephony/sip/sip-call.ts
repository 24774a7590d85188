/**
 * The calls of Zentrale's SIP user agent (user-agent.ts): an INVITE received (IncomingCall) or
 * sent (OutgoingCall), each with its dialog once confirmed, its end and the DTMF and SDP its
 * peer sends in the dialog. The user agent routes requests to them; they answer through it.
 */
import { contactUri, Dialog, newTag, withoutTag } from './dialog.js';
import { getTag, Headers, parseCSeq, parseNameAddr, type SipRequest, type SipResponse } from './message.js';
import { parseSdp, type SessionDescription } from './sdp.js';
import {
  type ClientTransaction,
  newBranch,
  type ServerTransaction,
  type TimerSettings,
  type TransactionLayer,
} from './transaction.js';
import type { Remote, SipTransport } from './transport.js';

export type EndReason =
  | 'bye'
  | 'local-bye'
  | 'cancel'
  | 'rejected'
  | 'no-ack'
  | 'timeout'
  | 'failed'
  | 'closed';

export interface DtmfInfo {
  digit: string;
  durationMs: number;
}

export const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, NOTIFY';
const DTMF_DIGITS = '0123456789*#ABCD';

/** RFC 6086 INFO bodies used for DTMF: application/dtmf-relay ("Signal=5") and application/dtmf ("5"). */
export function parseDtmfInfo(contentType: string, body: string): DtmfInfo | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  let signal: string | undefined;
  let duration = 160;
  if (type === 'application/dtmf-relay') {
    for (const line of body.split(/\r?\n/)) {
      const match = /^\s*(signal|duration)\s*=\s*(\S+)\s*$/i.exec(line);
      if (!match) continue;
      if (match[1]!.toLowerCase() === 'signal') signal = match[2];
      else duration = Number(match[2]) || duration;
    }
  } else if (type === 'application/dtmf') {
    signal = body.trim();
  } else return undefined;
  if (signal === undefined) return undefined;
  // Some phones send the event number (10 = *, 11 = #) instead of the character.
  const digit = /^\d{2}$/.test(signal) ? DTMF_DIGITS[Number(signal)] : signal.toUpperCase();
  if (digit?.length !== 1 || !DTMF_DIGITS.includes(digit)) return undefined;
  return { digit, durationMs: Math.min(Math.max(duration, 0), 10_000) };
}

/** What a call asks of its user agent (user-agent.ts's SipUserAgent is one). */
export interface CallHost {
  readonly options: {
    readonly inviteTimeoutSeconds: number;
    readonly ringTimeoutSeconds: number;
    readonly userAgent?: string;
  };
  readonly timers: TimerSettings;
  readonly transport: Pick<SipTransport, 'host' | 'hostport' | 'send'>;
  readonly layer: Pick<TransactionLayer, 'send'>;
  /** Our Contact header value. */
  contact(transport: 'udp' | 'tcp'): string;
  /** Sends a request within `dialog`; resolves with its final response (408 on timeout). */
  sendInDialog(
    dialog: Dialog,
    method: string,
    body?: Buffer,
    contentType?: string,
    headers?: [string, string][],
  ): Promise<SipResponse>;
  /** The dialog is confirmed (2xx sent or received). */
  confirm(call: SipCall): void;
  /** The call ended: requests for its dialog are no longer its. */
  forget(call: SipCall): void;
}

/** One call leg: a dialog with its events. */
export abstract class SipCall {
  dialog: Dialog | undefined;
  ended: EndReason | undefined;
  remoteSdp: SessionDescription | undefined;
  /** The peer's last SDP as sent (a B2BUA hands it to rtpengine unchanged). */
  remoteSdpText: string | undefined;
  /** The SDP we last sent; re-INVITEs are answered with it unless `onReoffer` says otherwise. */
  localSdp = '';
  private endHandlers: ((reason: EndReason) => void)[] = [];
  private dtmfHandlers: ((dtmf: DtmfInfo) => void)[] = [];
  private sdpHandlers: ((sdp: SessionDescription) => void)[] = [];
  /** Answers a re-INVITE's offer (hold, resume); returns our answer SDP. */
  onReoffer: ((offer: SessionDescription) => string) | undefined;

  constructor(
    protected readonly ua: CallHost,
    readonly callId: string,
  ) {}

  onEnd(handler: (reason: EndReason) => void): void {
    if (this.ended) handler(this.ended);
    else this.endHandlers.push(handler);
  }

  /** DTMF from SIP INFO (RFC 4733 events arrive at the media endpoint). */
  onDtmf(handler: (dtmf: DtmfInfo) => void): void {
    this.dtmfHandlers.push(handler);
  }

  /** The peer's SDP changed in a re-INVITE (hold: sendonly or inactive). */
  onRemoteSdp(handler: (sdp: SessionDescription) => void): void {
    this.sdpHandlers.push(handler);
  }

  /** @internal */
  finish(reason: EndReason): void {
    if (this.ended) return;
    this.ended = reason;
    this.ua.forget(this);
    for (const handler of this.endHandlers.splice(0)) handler(reason);
    this.dtmfHandlers = [];
    this.sdpHandlers = [];
  }

  /** @internal */
  emitDtmf(dtmf: DtmfInfo): void {
    for (const handler of this.dtmfHandlers) handler(dtmf);
  }

  /** @internal */
  emitRemoteSdp(sdp: SessionDescription): void {
    this.remoteSdp = sdp;
    for (const handler of this.sdpHandlers) handler(sdp);
  }

  /** Ends the call: BYE once established (15.1.1), CANCEL or 480 before; resolves when answered or timed out. */
  async bye(): Promise<void> {
    if (this.ended || !this.dialog) return;
    const dialog = this.dialog;
    this.finish('local-bye');
    await this.ua.sendInDialog(dialog, 'BYE');
  }

  /** Sends an INFO within the dialog (RFC 6086). */
  async info(contentType: string, body: string): Promise<SipResponse> {
    if (!this.dialog || this.ended) throw new Error('no dialog');
    return this.ua.sendInDialog(this.dialog, 'INFO', Buffer.from(body), contentType);
  }

  /** Sends a NOTIFY within the dialog (RFC 6665 4.2.2). */
  async notify(
    event: string,
    subscriptionState: string,
    contentType?: string,
    body?: string,
  ): Promise<SipResponse> {
    if (!this.dialog || this.ended) throw new Error('no dialog');
    return this.ua.sendInDialog(this.dialog, 'NOTIFY', body ? Buffer.from(body) : undefined, contentType, [
      ['event', event],
      ['subscription-state', subscriptionState],
    ]);
  }
}

/** An INVITE received: answer, progress or reject it. */
export class IncomingCall extends SipCall {
  readonly from: string;
  readonly to: string;
  readonly offer: SessionDescription | undefined;
  private readonly localTag = newTag();
  private ackWait: { resolve: () => void; reject: (error: Error) => void; timer: NodeJS.Timeout } | undefined;
  private answerTimer: NodeJS.Timeout;

  constructor(
    ua: CallHost,
    readonly request: SipRequest,
    private readonly transaction: ServerTransaction,
    readonly remote: Remote,
  ) {
    super(ua, request.headers.get('call-id')!);
    this.from = request.headers.get('from')!;
    this.to = request.headers.get('to')!;
    const type = request.headers.get('content-type') ?? 'application/sdp';
    this.offer =
      request.body.length > 0 && type.startsWith('application/sdp')
        ? parseSdp(request.body.toString())
        : undefined;
    this.remoteSdp = this.offer;
    if (this.offer) this.remoteSdpText = request.body.toString();
    const contact =
      contactUri(request.headers.get('contact')) ?? parseNameAddr(this.from)?.uri ?? request.uri;
    this.dialog = new Dialog({
      callId: this.callId,
      localTag: this.localTag,
      remoteTag: getTag(this.from) ?? '',
      localUri: withoutTag(this.to),
      remoteUri: withoutTag(this.from),
      remoteTarget: contact,
      routeSet: request.headers.getAll('record-route'),
      localSeq: Math.floor(Math.random() * 10_000),
      remoteSeq: parseCSeq(request.headers.get('cseq')!)!.seq,
      transport: remote.transport,
    });
    this.answerTimer = setTimeout(() => this.reject(408), ua.options.inviteTimeoutSeconds * 1000);
  }

  get answered(): boolean {
    return this.transaction.finalSent;
  }

  private response(status: number, sdp?: string, reason?: string): SipResponse {
    const response = this.transaction.response(status, reason, this.localTag);
    if (status > 100 && status < 300) response.headers.add('contact', this.ua.contact(this.remote.transport));
    if (status >= 200 && status < 300) response.headers.add('allow', ALLOW);
    if (sdp) {
      response.headers.add('content-type', 'application/sdp');
      response.body = Buffer.from(sdp);
    }
    return response;
  }

  /** 180 Ringing or 183 Session Progress (with SDP: early media). */
  progress(status: 180 | 181 | 182 | 183 = 180, sdp?: string): void {
    if (this.ended || this.answered) return;
    if (sdp) this.localSdp = sdp;
    this.transaction.respond(this.response(status, sdp));
  }

  /**
   * 200 OK with our SDP; retransmitted (13.3.1.4) until the ACK arrives. Resolves on the ACK;
   * rejects when none came within 64*T1, after ending the call with BYE.
   */
  answer(sdp: string): Promise<void> {
    if (this.ended) return Promise.reject(new Error(`call ended: ${this.ended}`));
    if (this.answered) return Promise.reject(new Error('already answered'));
    clearTimeout(this.answerTimer);
    this.localSdp = sdp;
    const ok = this.response(200, sdp);
    this.transaction.respond(ok);
    this.ua.confirm(this);
    const { t1, t2 } = this.ua.timers;
    return new Promise<void>((resolve, reject) => {
      let interval = t1;
      const retransmit = () => {
        if (!this.ackWait) return;
        if (this.remote.transport === 'udp') this.transaction.respond(ok);
        interval = Math.min(interval * 2, t2);
        this.ackWait.timer = setTimeout(retransmit, interval);
      };
      const giveUp = setTimeout(() => {
        if (!this.ackWait) return;
        clearTimeout(this.ackWait.timer);
        this.ackWait = undefined;
        reject(new Error('no ACK'));
        const dialog = this.dialog;
        this.finish('no-ack');
        if (dialog) void this.ua.sendInDialog(dialog, 'BYE').catch(() => {});
      }, 64 * t1);
      this.ackWait = {
        resolve: () => {
          clearTimeout(giveUp);
          resolve();
        },
        reject,
        timer: setTimeout(retransmit, interval),
      };
    });
  }

  /** @internal the ACK for our 2xx. */
  acked(): void {
    const wait = this.ackWait;
    if (!wait) return;
    clearTimeout(wait.timer);
    this.ackWait = undefined;
    wait.resolve();
  }

  /** Before the answer a callee cannot send BYE (RFC 3261 15): it rejects with 480 instead. */
  override async bye(): Promise<void> {
    if (!this.answered) this.reject(480);
    else await super.bye();
  }

  /** A final failure response (486 Busy, 603 Decline, 480...). */
  reject(status = 486, reason?: string): void {
    if (this.ended || this.answered) return;
    clearTimeout(this.answerTimer);
    this.transaction.respond(this.response(status, undefined, reason));
    this.finish(status === 408 ? 'timeout' : 'rejected');
  }

  /** @internal CANCEL before the answer (9.2): 487 to the INVITE. */
  cancelled(): void {
    if (this.ended || this.answered) return;
    clearTimeout(this.answerTimer);
    this.transaction.respond(this.response(487));
    this.finish('cancel');
  }

  override finish(reason: EndReason): void {
    clearTimeout(this.answerTimer);
    if (this.ackWait) {
      clearTimeout(this.ackWait.timer);
      const wait = this.ackWait;
      this.ackWait = undefined;
      // A BYE before the ACK still means the call was set up; the caller learns it ended.
      if (reason === 'bye') wait.resolve();
      else wait.reject(new Error(`call ended: ${reason}`));
    }
    super.finish(reason);
  }
}

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
