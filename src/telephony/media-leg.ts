/**
 * A call leg with media: one SIP call (sip/) and one RTP endpoint (media/) kept in step. The
 * SDP offer/answer (RFC 3264) sets where the endpoint sends, a re-INVITE moves or holds it
 * (RFC 3264 8.4), DTMF from SIP INFO (RFC 6086) and RFC 4733 arrive through one event, and the
 * endpoint closes when the call ends. This is what the call engine builds its calls from.
 */
import type { DtmfEvent, Endpoint, EndpointSource } from './media/index.js';
import {
  acceptAnswer,
  IncomingCall,
  type InviteOptions,
  type InviteResult,
  type LocalAudio,
  LocalSdp,
  type NegotiatedAudio,
  negotiate,
  type SessionDescription,
  type SipCall,
  type SipUserAgent,
} from './sip/index.js';

/** How a leg is held (RFC 3264 8.4): we send (music) and the peer does not, or neither sends. */
export type HoldMode = 'sendonly' | 'inactive';

export class MediaLeg<E extends Endpoint = Endpoint> {
  /** Held by us: the direction we offered; undefined while not held. */
  held: HoldMode | undefined;

  private constructor(
    readonly call: SipCall,
    readonly endpoint: E,
    /** One o= session for the leg's life: a re-offer only raises its version (RFC 3264 8). */
    private readonly sdp = new LocalSdp(),
  ) {
    call.onEnd(() => endpoint.close());
    call.onDtmf((dtmf) => endpoint.emitDtmf({ ...dtmf, source: 'info' }));
    call.onReoffer = (offer) => this.reoffer(offer);
  }

  private get local(): LocalAudio {
    return { address: this.endpoint.address, port: this.endpoint.port, direction: this.held ?? 'sendrecv' };
  }

  private apply(negotiated: NegotiatedAudio): void {
    this.endpoint.setRemote({
      address: negotiated.remoteAddress,
      port: negotiated.remotePort,
      payloadType: negotiated.payloadType,
      telephoneEvent: negotiated.telephoneEvent,
      direction: negotiated.direction,
    });
  }

  private reoffer(offer: SessionDescription): string {
    // No audio stream (a fax machine moving to T.38, image/t38 over UDPTL): refused with 488,
    // the call stays on G.711 audio (decisions.md "Fax over the network").
    if (!offer.audio) throw new Error('the offer has no audio stream');
    const negotiated = negotiate(offer, this.local);
    if (!negotiated) return this.call.localSdp;
    this.apply(negotiated);
    return this.sdp.answer(this.local, negotiated);
  }

  /**
   * Takes an incoming call's offer: undefined (after answering 488) when no codec matches.
   * With `early`, a 183 with our SDP goes out so that prompts play before the answer.
   */
  static async accept<E extends Endpoint>(
    call: IncomingCall,
    engine: EndpointSource<E>,
    options: { early?: boolean } = {},
  ): Promise<MediaLeg<E> | undefined> {
    const endpoint = await engine.createEndpoint();
    const local = { address: endpoint.address, port: endpoint.port };
    const negotiated = call.offer && negotiate(call.offer, local);
    if (!negotiated || call.ended) {
      endpoint.close();
      call.reject(call.offer ? 488 : 415);
      return undefined;
    }
    const leg = new MediaLeg(call, endpoint);
    leg.apply(negotiated);
    call.localSdp = leg.sdp.answer(local, negotiated);
    if (options.early) call.progress(183, call.localSdp);
    return leg;
  }

  /** Answers the call this leg accepted (200 with the SDP; resolves on the ACK). */
  answer(): Promise<void> {
    if (!(this.call instanceof IncomingCall)) return Promise.reject(new Error('not an incoming call'));
    return this.call.answer(this.call.localSdp);
  }

  /**
   * Originates a call with a fresh endpoint. The leg exists at once (so that `hangup` can
   * CANCEL it while it rings, as parallel ringing needs); `result` settles with the final
   * status, and the endpoint is closed when the call failed or its answer had no usable SDP.
   */
  static async originate<E extends Endpoint>(
    ua: SipUserAgent,
    engine: EndpointSource<E>,
    options: Omit<InviteOptions, 'sdp'>,
  ): Promise<MediaLeg<E> & { result: Promise<InviteResult> }> {
    const endpoint = await engine.createEndpoint();
    const sdp = new LocalSdp();
    const local = { address: endpoint.address, port: endpoint.port };
    const call = ua.invite({ ...options, sdp: sdp.offer(local) });
    const leg = new MediaLeg(call, endpoint, sdp);
    // Early media (183 with SDP) plays through the same endpoint.
    call.onProgress((_status, early) => {
      const negotiated = early && acceptAnswer(early, local);
      if (negotiated) leg.apply(negotiated);
    });
    const result = call.result.then(async (final) => {
      const negotiated = call.remoteSdp && acceptAnswer(call.remoteSdp, local);
      if (final.status >= 200 && final.status < 300 && negotiated) leg.apply(negotiated);
      else if (final.status >= 200 && final.status < 300) await call.bye();
      else endpoint.close();
      return final;
    });
    return Object.assign(leg, { result });
  }

  /**
   * Holds the peer (RFC 3264 8.4): a re-INVITE offering `sendonly` (we may play music on hold,
   * the peer sends nothing) or `inactive` (silence both ways). Our endpoint then sends only as
   * agreed. Resolves with the re-INVITE's final status (491: offers crossed; the leg is as before).
   */
  hold(mode: HoldMode = 'inactive'): Promise<number> {
    return this.renegotiate(mode);
  }

  /** Takes the peer off hold: a re-INVITE offering sendrecv. */
  resume(): Promise<number> {
    return this.renegotiate(undefined);
  }

  private async renegotiate(held: HoldMode | undefined): Promise<number> {
    const before = this.held;
    this.held = held;
    const response = await this.call.reoffer(this.sdp.offer(this.local)).catch(() => undefined);
    const negotiated =
      response &&
      response.status < 300 &&
      this.call.remoteSdp &&
      acceptAnswer(this.call.remoteSdp, this.local);
    if (negotiated) this.apply(negotiated);
    else this.held = before;
    return response?.status ?? 0;
  }

  /** DTMF from either RFC 4733 or SIP INFO. */
  onDtmf(handler: (event: DtmfEvent) => void): void {
    this.endpoint.onDtmf(handler);
  }

  /** Ends the call (BYE, or CANCEL/reject before the answer) and frees the port. */
  async hangup(): Promise<void> {
    await this.call.bye();
    this.endpoint.close();
  }
}
