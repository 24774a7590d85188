/**
 * The calls of Zentrale's SIP user agent (user-agent.ts): SipCall, one leg with its dialog once
 * confirmed, its end, and the requests either side sends within it (in-dialog.ts: re-INVITE,
 * UPDATE, REFER and its NOTIFYs, INFO); an INVITE received (IncomingCall, here) or sent
 * (OutgoingCall, outgoing-call.ts). The user agent routes requests to them; they answer
 * through it.
 */
import { contactUri, Dialog, newTag, withoutTag } from './dialog.js';
import { ALLOW, type DialogPeer, type DtmfInfo, dtmfRelayBody, type Referral, referTo } from './in-dialog.js';
import { getTag, parseCSeq, parseNameAddr, type SipRequest, type SipResponse } from './message.js';
import { parseSdp, type SessionDescription } from './sdp.js';
import type { ServerTransaction, TimerSettings, TransactionLayer } from './transaction.js';
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

export { ALLOW, type DtmfInfo, parseDtmfInfo } from './in-dialog.js';

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

/** One call leg: a dialog with its events and the requests either side sends within it. */
export abstract class SipCall implements DialogPeer {
  dialog: Dialog | undefined;
  ended: EndReason | undefined;
  remoteSdp: SessionDescription | undefined;
  /** The peer's last SDP as sent (a B2BUA hands it to rtpengine unchanged). */
  remoteSdpText: string | undefined;
  /** The SDP we last sent; re-INVITEs are answered with it unless `onReoffer` says otherwise. */
  localSdp = '';
  /** A re-INVITE or UPDATE of ours with an offer awaits its answer. */
  offering = false;
  private endHandlers: ((reason: EndReason) => void)[] = [];
  private dtmfHandlers: ((dtmf: DtmfInfo) => void)[] = [];
  private sdpHandlers: ((sdp: SessionDescription) => void)[] = [];
  private referHandler: ((referral: Referral) => void) | undefined;
  /** REFERs we sent, by CSeq, waiting for the final sipfrag of the call they asked for. */
  private readonly referrals = new Map<number, (status: number) => void>();
  private ackWait: { resolve: () => void; reject: (error: Error) => void; timer: NodeJS.Timeout } | undefined;
  /**
   * Answers an offer in a re-INVITE or UPDATE (hold, resume, a move) with our answer SDP; a
   * rejection answers the request 488 and leaves the session as it was.
   */
  onReoffer: ((offer: SessionDescription, text: string) => string | Promise<string>) | undefined;

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

  /** The peer's SDP changed in a re-INVITE or UPDATE (hold: sendonly or inactive). */
  onRemoteSdp(handler: (sdp: SessionDescription) => void): void {
    this.sdpHandlers.push(handler);
  }

  /** The peer asks the call to go elsewhere (REFER, accepted with 202); without a handler REFER gets 603. */
  onRefer(handler: ((referral: Referral) => void) | undefined): void {
    this.referHandler = handler;
  }

  get takesRefers(): boolean {
    return this.referHandler !== undefined && !this.ended;
  }

  /** @internal */
  finish(reason: EndReason): void {
    if (this.ended) return;
    this.ended = reason;
    this.ua.forget(this);
    const wait = this.ackWait;
    this.ackWait = undefined;
    if (wait) {
      clearTimeout(wait.timer);
      // A BYE before the ACK still means the call was set up; the caller learns it ended.
      if (reason === 'bye') wait.resolve();
      else wait.reject(new Error(`call ended: ${reason}`));
    }
    for (const settle of this.referrals.values()) settle(0);
    this.referrals.clear();
    for (const handler of this.endHandlers.splice(0)) handler(reason);
    this.dtmfHandlers = [];
    this.sdpHandlers = [];
    this.referHandler = undefined;
  }

  /** @internal */
  emitDtmf(dtmf: DtmfInfo): void {
    for (const handler of this.dtmfHandlers) handler(dtmf);
  }

  /** @internal */
  emitRemoteSdp(sdp: SessionDescription, text: string): void {
    this.remoteSdp = sdp;
    this.remoteSdpText = text;
    for (const handler of this.sdpHandlers) handler(sdp);
  }

  /** @internal */
  emitRefer(referral: Referral): void {
    this.referHandler?.(referral);
  }

  /**
   * @internal our answer to the peer's offer, or our last SDP when it made none. While an
   * answer is worked out (a B2BUA asks the other leg) an offer crossing it gets 491.
   */
  async answerOffer(offer: SessionDescription | undefined, text: string): Promise<string> {
    if (!offer) return this.localSdp;
    if (this.onReoffer) {
      this.offering = true;
      try {
        this.localSdp = await this.onReoffer(offer, text);
      } finally {
        this.offering = false;
      }
    }
    this.emitRemoteSdp(offer, text);
    return this.localSdp;
  }

  /** @internal a NOTIFY of a REFER we sent: settles it on a final status or the subscription's end. */
  referProgress(id: number | undefined, status: number, terminated: boolean): void {
    const key = id ?? this.referrals.keys().next().value;
    const settle = key === undefined ? undefined : this.referrals.get(key);
    if (!settle || (status < 200 && !terminated)) return;
    this.referrals.delete(key!);
    settle(status);
  }

  /**
   * @internal our 2xx to an INVITE or re-INVITE: sent now and, over UDP, again until the ACK
   * (13.3.1.4). Resolves on the ACK; after 64*T1 without one the call ends with BYE (14.2).
   */
  awaitAck(respond: () => void): Promise<void> {
    respond();
    this.acked();
    const { t1, t2 } = this.ua.timers;
    return new Promise<void>((resolve, reject) => {
      let interval = t1;
      const retransmit = () => {
        if (!this.ackWait) return;
        if (this.dialog?.state.transport !== 'tcp') respond();
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
        reject: (error) => {
          clearTimeout(giveUp);
          reject(error);
        },
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

  /** Ends the call: BYE once established (15.1.1), CANCEL or 480 before; resolves when answered or timed out. */
  async bye(): Promise<void> {
    if (this.ended || !this.dialog) return;
    const dialog = this.dialog;
    this.finish('local-bye');
    await this.ua.sendInDialog(dialog, 'BYE');
  }

  private confirmed(): Dialog {
    if (!this.dialog || this.ended) throw new Error('no dialog');
    return this.dialog;
  }

  /**
   * A new offer within the dialog: a re-INVITE (RFC 3261 14.1, acknowledged by the user agent)
   * or an UPDATE (RFC 3311). On 2xx the peer's answer becomes `remoteSdp`; 491 means offers
   * crossed and the caller may retry.
   */
  async reoffer(sdp: string, method: 'INVITE' | 'UPDATE' = 'INVITE'): Promise<SipResponse> {
    const dialog = this.confirmed();
    if (this.offering) throw new Error('an offer is pending');
    this.offering = true;
    try {
      const response = await this.ua.sendInDialog(dialog, method, Buffer.from(sdp), 'application/sdp');
      if (response.status >= 200 && response.status < 300) {
        this.localSdp = sdp;
        const text = response.body.toString();
        const answer = text ? parseSdp(text) : undefined;
        if (answer) {
          this.remoteSdp = answer;
          this.remoteSdpText = text;
        }
        const contact = contactUri(response.headers.get('contact'));
        if (contact) dialog.state.remoteTarget = contact;
      }
      return response;
    } finally {
      this.offering = false;
    }
  }

  /** An UPDATE without an offer: refreshes the session (RFC 3311 5.1, RFC 4028). */
  refresh(): Promise<SipResponse> {
    return this.ua.sendInDialog(this.confirmed(), 'UPDATE');
  }

  /** Sends an INFO within the dialog (RFC 6086). */
  async info(contentType: string, body: string): Promise<SipResponse> {
    return this.ua.sendInDialog(this.confirmed(), 'INFO', Buffer.from(body), contentType);
  }

  /** A DTMF digit as an INFO (application/dtmf-relay). */
  sendDtmf(digit: string, durationMs = 160): Promise<SipResponse> {
    return this.info('application/dtmf-relay', dtmfRelayBody({ digit, durationMs }));
  }

  /**
   * Asks the peer to call `target` (REFER, RFC 3515): with `replacing`, our dialog with the
   * target is replaced there (attended transfer, RFC 3891). Resolves with the final status of
   * the peer's call as its NOTIFY sipfrag says, the REFER's refusal (4xx-6xx), or 0 when the
   * call ended or no final report came in `timeoutMs`.
   */
  async refer(target: string, options: { replacing?: SipCall; timeoutMs?: number } = {}): Promise<number> {
    const dialog = this.confirmed();
    if (options.replacing && !options.replacing.dialog) throw new Error('the replaced call has no dialog');
    const seq = dialog.state.localSeq + 1;
    let settle!: (status: number) => void;
    const outcome = new Promise<number>((resolve) => {
      settle = resolve;
    });
    this.referrals.set(seq, settle);
    const timer = setTimeout(() => this.referProgress(seq, 0, true), options.timeoutMs ?? 64_000);
    const response = await this.ua.sendInDialog(dialog, 'REFER', undefined, undefined, [
      ['refer-to', referTo(target, options.replacing?.dialog)],
      ['referred-by', `<${withoutTag(dialog.state.localUri).replace(/^<|>$/g, '')}>`],
    ]);
    if (response.status >= 300) this.referProgress(seq, response.status, true);
    const status = await outcome;
    clearTimeout(timer);
    return status;
  }

  /** Sends a NOTIFY within the dialog (RFC 6665 4.2.2). */
  async notify(
    event: string,
    subscriptionState: string,
    contentType?: string,
    body?: string,
  ): Promise<SipResponse> {
    return this.ua.sendInDialog(
      this.confirmed(),
      'NOTIFY',
      body ? Buffer.from(body) : undefined,
      contentType,
      [
        ['event', event],
        ['subscription-state', subscriptionState],
      ],
    );
  }
}

/** An INVITE received: answer, progress or reject it. */
export class IncomingCall extends SipCall {
  readonly from: string;
  readonly to: string;
  readonly offer: SessionDescription | undefined;
  /**
   * The call this INVITE replaces (RFC 3891: its Replaces header named that dialog): answering
   * it is the attended transfer's end, and the replaced call is then hung up by whoever answers.
   */
  replaces: SipCall | undefined;
  private readonly localTag = newTag();
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
    const acked = this.awaitAck(() => this.transaction.respond(ok));
    this.ua.confirm(this);
    return acked;
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
    super.finish(reason);
  }
}
