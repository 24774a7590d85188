/**
 * Two SIP dialogs whose media rtpengine relays (bridge.ts), kept the way relay.ts's LegPair
 * keeps two media legs: when a party of the pair ends, the other is hung up and `ended`
 * resolves; a party swapped out is no longer of the pair, and its end ends nothing. A swap is
 * how a transfer of such a call connects the party that stays to a new leg: in a new rtpengine
 * session (its own call-id), offered from the staying party's last SDP, the new leg answering,
 * and a re-INVITE moving the staying party to the new session's ports (RFC 3264 8: a new offer
 * in the dialog, as for hold).
 */
import type { NgClient } from '../rtpengine/ng-client.js';
import type { OutgoingCall, SipCall } from '../sip/index.js';

/** rtpengine's flags for every offer and answer of a relayed call. */
export const RELAY_FLAGS = { flags: ['trust-address'], replace: ['origin', 'session-connection'] };

/** rtpengine's session of a relayed call now; the media commands read it at each command. */
export interface RelaySession {
  callId: string;
  /** The tag of the pair's first party (the caller, until a transfer swaps it). */
  callerTag: string;
  /** The tag of the pair's second party (the answering leg, until a transfer swaps it). */
  calleeTag: string;
}

/** The peer's tag in `party`'s dialog (the caller's From tag, the answering leg's To tag). */
export function tagOf(party: SipCall): string {
  return party.dialog?.state.remoteTag ?? '';
}

export class RelayedPair {
  #parties: [SipCall, SipCall];
  #over = false;
  #resolve!: () => void;
  /** Sessions created for swaps, numbered after the call's own: `<call-id>~<n>`. */
  #swaps = 0;
  /** Every rtpengine session of the pair so far: all are deleted at its end. */
  readonly #sessions: string[];
  readonly ended = new Promise<void>((resolve) => {
    this.#resolve = resolve;
  });

  constructor(
    private readonly ng: NgClient,
    caller: SipCall,
    callee: OutgoingCall,
    /** rtpengine's session of the two (the caller's Call-ID and tags). */
    readonly session: RelaySession,
  ) {
    this.#parties = [caller, callee];
    this.#sessions = [session.callId];
    this.watch(caller);
    this.watch(callee);
    this.relayOffers();
  }

  readonly #swapped: (() => void)[] = [];

  /** Told after each swap: `session` names the new rtpengine session from then on. */
  onSwap(listener: () => void): void {
    this.#swapped.push(listener);
  }

  /** The parties connected now: [the caller's side, the answering side]. */
  get parties(): readonly [SipCall, SipCall] {
    return this.#parties;
  }

  get over(): boolean {
    return this.#over;
  }

  /** The party of the pair that is not `party`. */
  otherOf(party: SipCall): SipCall {
    return this.#parties[0] === party ? this.#parties[1] : this.#parties[0];
  }

  private watch(party: SipCall): void {
    party.onEnd(() => {
      if (!this.#parties.includes(party) || this.#over) return;
      this.#over = true;
      for (const other of this.#parties) if (other !== party) void other.bye().catch(() => {});
      for (const callId of this.#sessions) void this.ng.delete({ 'call-id': callId }).catch(() => {});
      this.#resolve();
    });
  }

  /**
   * A new rtpengine session for the party that stays (the other of `leaving`), offered from its
   * last SDP: the SDP to offer whoever is to take `leaving`'s place.
   */
  async open(leaving: SipCall): Promise<{ callId: string; offer: string }> {
    const stays = this.otherOf(leaving);
    this.#swaps += 1;
    const callId = `${this.#sessions[0]}~${this.#swaps}`;
    const key = { 'call-id': callId, 'from-tag': tagOf(stays), ...RELAY_FLAGS };
    const offered = await this.ng.offer({ ...key, sdp: stays.remoteSdpText ?? '' });
    this.#sessions.push(callId);
    return { callId, offer: String(offered.sdp) };
  }

  /**
   * Rings a new leg (`invite` with the offer) to take `leaving`'s place; undefined when it did
   * not answer (its final status in `status`). The pair is as it was until `swap`.
   */
  async dial(
    invite: (sdp: string) => OutgoingCall,
    leaving: SipCall,
    onLeg: (leg: OutgoingCall) => void,
  ): Promise<{ leg: OutgoingCall; callId: string } | { status: number }> {
    const { callId, offer } = await this.open(leaving);
    const leg = invite(offer);
    onLeg(leg);
    const result = await leg.result;
    if (result.status < 200 || result.status >= 300 || leg.ended || this.#over) {
      void leg.bye().catch(() => {});
      void this.ng.delete({ 'call-id': callId }).catch(() => {});
      return { status: result.status >= 300 ? result.status : 487 };
    }
    return { leg, callId };
  }

  /**
   * A party already in a dialog with Zentrale (the other party of another call, a held one)
   * takes `leaving`'s place: it is re-INVITEd with the new session's offer, then the staying
   * party with the answer (swap). false when either refused; the pair is then as it was.
   */
  async join(leaving: SipCall, joining: SipCall): Promise<boolean> {
    const { callId, offer } = await this.open(leaving);
    const moved = await joining.reoffer(offer).catch(() => undefined);
    if (!moved || moved.status < 200 || moved.status >= 300 || this.#over) return false;
    return this.swap(leaving, joining, callId);
  }

  /**
   * `leaving` leaves the pair alive, already moved to another pair's session (a bridge): the
   * pair is over, its other party hung up, its sessions deleted, and `ended` resolves.
   */
  release(leaving: SipCall): void {
    if (this.#over || !this.#parties.includes(leaving)) return;
    this.#over = true;
    const others = this.#parties.filter((party) => party !== leaving);
    this.#parties = [leaving, leaving];
    for (const other of others) void other.bye().catch(() => {});
    for (const callId of this.#sessions) void this.ng.delete({ 'call-id': callId }).catch(() => {});
    this.#resolve();
  }

  /**
   * `leaving` leaves the pair (the caller hangs it up or holds it) and `joining`, answered in
   * session `callId` (dial, join), takes its place: the staying party is re-INVITEd to the new
   * session. false when the staying party refused the move (the pair unchanged; a new leg
   * `joining` is hung up). The sessions stay until the pair ends: a held party keeps its own.
   */
  async swap(leaving: SipCall, joining: SipCall, callId: string): Promise<boolean> {
    const stays = this.otherOf(leaving);
    const key = { 'call-id': callId, 'from-tag': tagOf(stays), 'to-tag': tagOf(joining), ...RELAY_FLAGS };
    const answer = await this.ng.answer({ ...key, sdp: joining.remoteSdpText ?? '' });
    const moved = await stays.reoffer(String(answer.sdp)).catch(() => undefined);
    if (!moved || moved.status < 200 || moved.status >= 300 || this.#over) return false;
    this.#parties = this.#parties[0] === leaving ? [joining, stays] : [stays, joining];
    Object.assign(this.session, {
      callId,
      callerTag: tagOf(this.#parties[0]),
      calleeTag: tagOf(this.#parties[1]),
    });
    this.relayOffers();
    // A party that ended meanwhile ends the pair at once (onEnd runs for an ended call too).
    this.watch(joining);
    for (const listener of this.#swapped) listener();
    return true;
  }

  /**
   * Passes an offer in a re-INVITE or UPDATE from either party to the other through rtpengine
   * (RFC 3264 8 across the B2BUA: hold, resume, a moved address): rtpengine's offer goes to the
   * other party in a re-INVITE, its answer back through rtpengine to the party that offered. A
   * refusal there answers the offer 488 and the session stays as it was.
   */
  private relayOffers(): void {
    const [a, b] = this.#parties;
    const pass = (from: SipCall, other: SipCall) => async (_offer: unknown, sdp: string) => {
      const tags = { 'call-id': this.session.callId, 'from-tag': tagOf(from), 'to-tag': tagOf(other) };
      const offered = await this.ng.offer({ ...tags, ...RELAY_FLAGS, sdp });
      const response = await other.reoffer(String(offered.sdp));
      if (response.status < 200 || response.status >= 300)
        throw new Error(`re-INVITE answered ${response.status}`);
      const answer = await this.ng.answer({ ...tags, ...RELAY_FLAGS, sdp: response.body.toString() });
      return String(answer.sdp);
    };
    a.onReoffer = pass(a, b);
    b.onReoffer = pass(b, a);
  }
}
