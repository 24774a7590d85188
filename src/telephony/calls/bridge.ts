/**
 * A back-to-back call between the caller's leg (an INVITE Zentrale answers) and one or more
 * legs Zentrale originates, with media relayed by rtpengine: the caller's SDP goes to `offer`
 * and the originated legs get rtpengine's SDP; the answering leg's SDP goes to `answer` and the
 * caller gets rtpengine's. Ringing is passed back, the first answer wins (the other forks are
 * cancelled), a BYE from either side ends the other, CANCEL from the caller cancels the forks,
 * a failure is passed back when no fork answers. A re-INVITE or UPDATE with an offer from
 * either party (hold, resume, a moved address) goes to the other through rtpengine. The
 * rtpengine session is deleted at the end.
 *
 * Why rtpengine and not two MediaEndpoints: both phones speak G.711 with telephone-event, so
 * the relay needs no transcoding; rtpengine forwards in C without the packets ever entering
 * Node (telephony-notes.md: 500 relayed calls at 45 % of one core), and it is the one owner of
 * each media session for later recording and play-media.
 */
import type { Clock } from '../../platform/clock.js';
import { nowSeconds } from '../../platform/ids.js';
import type { NgClient } from '../rtpengine/ng-client.js';
import type { IncomingCall, OutgoingCall, Remote, SipUserAgent } from '../sip/index.js';
import { getTag } from '../sip/message.js';
import { RELAY_FLAGS, RelayedPair, tagOf } from './relayed-pair.js';

export interface BridgeTarget {
  readonly uri: string;
  /** Seconds this target rings; default the group's. */
  readonly timeout?: number;
  /** The caller id this target sees (a dialplan target's own clip_number); default the options'. */
  readonly from?: string;
  readonly fromDisplay?: string;
  /** Where the INVITE goes; default Kamailio (a call-reverse hand-over goes to another node's UA). */
  readonly target?: Remote;
}

export interface BridgeOptions {
  /** Tried in order; the targets of one group ring at once. */
  readonly groups: readonly (readonly BridgeTarget[])[];
  /** Seconds a group rings when its targets say nothing. */
  readonly timeout: number;
  readonly from: string;
  readonly fromDisplay?: string;
  readonly headers?: [string, string][];
  /** No fork answered: leave the caller unanswered (a fallback follows) instead of passing the failure back. */
  readonly keepCallerOnFailure?: boolean;
  /**
   * The answering leg, before the caller gets the answer (the Call keeps it among its dialogs),
   * and the pair rtpengine relays (the media commands steer its session: relayed-media.ts; a
   * transfer swaps one of its parties: transfer.ts).
   */
  readonly onConnected?: (leg: OutgoingCall, pair: RelayedPair) => void;
}

export interface BridgeOutcome {
  /** 200 when connected; else the final status passed back to the caller (0: the caller gave up). */
  readonly status: number;
  /** Seconds since the epoch. */
  readonly answered: number | null;
  /** Resolves when the connected call ended (at once when it never connected). */
  readonly ended: Promise<void>;
}

/** The status a caller hears when every fork failed: busy wins, then the one failure, else 480. */
export function failureStatus(statuses: readonly number[]): number {
  const real = statuses.filter((status) => status >= 300);
  if (real.includes(486) || real.includes(600)) return 486;
  if (real.length === 1 && real[0] !== 408 && real[0] !== 487) return real[0]!;
  if (real.length > 0 && real.every((status) => status === real[0]) && real[0] !== 487) return real[0]!;
  return 480;
}

/**
 * The first leg of a ringing group to answer (2xx), or undefined when none did or the caller
 * gave up meanwhile; the others (and late answers) are dropped, failures pushed to `statuses`.
 */
export function firstAnswer<L extends { readonly result: Promise<{ status: number }> }>(
  legs: readonly L[],
  callerEnded: () => boolean,
  drop: (leg: L) => Promise<unknown>,
  statuses: number[],
): Promise<L | undefined> {
  return new Promise((resolve) => {
    let open = legs.length;
    let won = false;
    if (open === 0) resolve(undefined);
    for (const leg of legs) {
      void leg.result.then((result) => {
        open -= 1;
        const ok = result.status >= 200 && result.status < 300;
        if (ok && !won && !callerEnded()) {
          won = true;
          for (const other of legs) if (other !== leg) void drop(other).catch(() => {});
          resolve(leg);
          return;
        }
        if (ok) void drop(leg).catch(() => {});
        else statuses.push(result.status);
        if (open === 0 && !won) resolve(undefined);
      });
    }
  });
}

export async function bridge(
  ua: SipUserAgent,
  ng: NgClient,
  /** The wall clock of the answer's stamp. */
  clock: Clock,
  caller: IncomingCall,
  options: BridgeOptions,
): Promise<BridgeOutcome> {
  const none = Promise.resolve();
  const callerSdp = caller.remoteSdpText;
  if (!callerSdp) {
    caller.reject(488);
    return { status: 488, answered: null, ended: none };
  }
  const session = { 'call-id': caller.callId, 'from-tag': getTag(caller.from) ?? '' };
  const flags = RELAY_FLAGS;
  let offered: string;
  try {
    offered = String((await ng.offer({ ...session, ...flags, sdp: callerSdp })).sdp);
  } catch {
    caller.reject(503);
    return { status: 503, answered: null, ended: none };
  }
  const release = () => void ng.delete(session).catch(() => {});
  let ringing = false;
  const statuses: number[] = [];

  for (const group of options.groups) {
    if (caller.ended) break;
    const winner = await ringGroup(group);
    if (!winner) continue;
    const { leg } = winner;
    let answerSdp: string;
    try {
      const answer = await ng.answer({
        ...session,
        ...flags,
        'to-tag': leg.dialog?.state.remoteTag ?? '',
        sdp: leg.remoteSdpText ?? '',
      });
      answerSdp = String(answer.sdp);
    } catch {
      await leg.bye();
      caller.reject(503);
      release();
      return { status: 503, answered: null, ended: none };
    }
    const pair = new RelayedPair(ng, caller, leg, {
      callId: session['call-id'],
      callerTag: session['from-tag'],
      calleeTag: tagOf(leg),
    });
    const ended = pair.ended;
    options.onConnected?.(leg, pair);
    try {
      await caller.answer(answerSdp);
    } catch {
      // No ACK or the caller hung up meanwhile: the pair ends the callee's leg.
      await ended;
      return { status: caller.ended === 'cancel' ? 0 : 408, answered: null, ended: none };
    }
    return { status: 200, answered: nowSeconds(clock), ended };
  }
  // A fallback may bridge the same call again (same session key): the session is gone before it offers.
  if (options.keepCallerOnFailure && !caller.ended) await ng.delete(session).catch(() => {});
  else release();
  if (caller.ended) return { status: 0, answered: null, ended: none };
  const status = failureStatus(statuses);
  if (!options.keepCallerOnFailure) caller.reject(status);
  return { status, answered: null, ended: none };

  /** Rings every target of a group at once; the first 2xx wins, the others are cancelled. */
  async function ringGroup(group: readonly BridgeTarget[]): Promise<{ leg: OutgoingCall } | undefined> {
    const legs = group.map((target) => {
      const leg = ua.invite({
        uri: target.uri,
        from: target.from ?? options.from,
        fromDisplay: target.fromDisplay ?? options.fromDisplay,
        headers: options.headers,
        sdp: offered,
        ...(target.target ? { target: target.target } : {}),
      });
      leg.onProgress((status) => {
        if (status >= 180 && !ringing && !caller.ended) {
          ringing = true;
          caller.progress(180);
        }
      });
      const timer = setTimeout(() => leg.cancel(), (target.timeout ?? options.timeout) * 1000);
      void leg.result.then(() => clearTimeout(timer));
      return leg;
    });
    // The caller gave up: the ringing legs go. The one that answered is the pair's from then on
    // (a transfer may keep it after the caller left).
    let winner: OutgoingCall | undefined;
    caller.onEnd(() => {
      for (const leg of legs) if (leg !== winner) void leg.bye().catch(() => {});
    });
    winner = await firstAnswer(
      legs,
      () => caller.ended !== undefined,
      (leg) => leg.bye(),
      statuses,
    );
    return winner && { leg: winner };
  }
}
