/**
 * Transfer and bridge of calls rtpengine relays between two phones (POST /api/call/{uuid}/control
 * `transfer`, `transfer-complete`, `transfer-cancel`, `bridge`, and a phone's blind REFER;
 * docs/decisions.md "Call control: transfer and bridge"). The parties are SIP dialogs of a
 * RelayedPair (relayed-pair.ts); moving one to another party is a new rtpengine session and
 * re-INVITEs, so the media never enters Zentrale. The user's side is the caller of a call going
 * out and the answering leg of a call coming in.
 */
import type { OutgoingCall, Referral, SipCall } from '../sip/index.js';
import type { Call } from './call.js';
import type { EngineContext } from './context.js';
import { parseDialled, uriUser } from './dial.js';
import { CallError } from './errors.js';
import { type RelayedPair, tagOf } from './relayed-pair.js';
import {
  TRANSFER_RING_SECONDS,
  type TransferTarget,
  TransferTargetError,
  targetLeg,
} from './transfer-target.js';

/** How long a phone that asked for a transfer (REFER) may stay after its NOTIFY 200 before it is hung up. */
const REFERRER_LINGER_MS = 5000;

/** The pair of dialogs a call rtpengine relays (set by the bridge's onConnected, relayed-media.ts). */
const bridged = new WeakMap<Call, RelayedPair>();

/**
 * Transfers under way (one per call): while the target rings, how to give it up; an attended
 * one's held party and target once the consult is up.
 */
interface RelayedTransfer {
  held: SipCall | undefined;
  target: OutgoingCall | undefined;
  giveUp: (() => void) | undefined;
}
const transfers = new WeakMap<Call, RelayedTransfer>();

/**
 * `call`'s media is relayed by rtpengine between `pair`'s parties: a transfer may swap the
 * user's. The user's own phone may ask for one too (a blind REFER, RFC 3515); the other party's
 * REFER stays refused (603): it is not the call owner's phone, and the owner's call filter and
 * identity would apply to its transfer.
 */
export function relayingPair(ctx: EngineContext, call: Call, pair: RelayedPair): void {
  bridged.set(call, pair);
  const own = ownSide(call, pair);
  own.onRefer((referral) => void referred(ctx, call, pair, own, referral));
}

/** The pair of a call rtpengine relays; undefined for other calls. */
export function relayedPairOf(call: Call): RelayedPair | undefined {
  return bridged.get(call);
}

/** The user's side of a call rtpengine relays: the caller of a call going out, else the answering leg. */
function ownSide(call: Call, pair: RelayedPair): SipCall {
  return pair.parties[call.direction === 'out' ? 0 : 1];
}

/** The user's side, with both parties up; illegal-state otherwise. */
function connected(call: Call, pair: RelayedPair): SipCall {
  if (pair.over || call.ended || pair.parties.some((party) => !party.dialog || party.ended))
    throw new CallError('illegal-state', `call ${call.uuid} connects no two parties`);
  return ownSide(call, pair);
}

/**
 * The user's phone asked for a blind transfer (REFER without Replaces): the same transfer as
 * the call API's, its progress told back as NOTIFY sipfrag (100, then the target's answer or
 * failure). A REFER with Replaces (the phone's attended transfer) is answered 501 in sipfrag.
 */
async function referred(
  ctx: EngineContext,
  call: Call,
  pair: RelayedPair,
  own: SipCall,
  referral: Referral,
): Promise<void> {
  const notify = (status: number, reason: string) => referral.notify(status, reason).catch(() => {});
  if (referral.replaces) return notify(501, 'Not Implemented');
  const dialled = parseDialled(uriUser(referral.target));
  const target: TransferTarget | undefined =
    dialled.kind === 'sip'
      ? { sip: dialled.username }
      : dialled.kind === 'number'
        ? { phone: dialled.number }
        : undefined;
  if (!target) return notify(404, 'Not Found');
  try {
    // The phone hears of the success first and hangs up itself, as after any transfer it asked
    // for; one that stays is hung up after a while.
    await transferRelayed(ctx, call, pair, target, false, async () => {
      await notify(200, 'OK');
      call.setTimer(() => void own.bye().catch(() => {}), REFERRER_LINGER_MS);
    });
  } catch (error) {
    if (error instanceof TransferTargetError) return notify(error.kind === 'sip' ? 404 : 403, 'Forbidden');
    await notify(error instanceof CallError && error.code === 'illegal-state' ? 491 : 480, 'Unavailable');
  }
}

/**
 * Transfer of a call rtpengine relays. The target rings in a new rtpengine session offered from
 * the user's or the other party's SDP. Blind: once it answered, the other party is re-INVITEd to
 * it and the user's side let go (`release`, by default hung up). Attended: once it answered, the
 * user's side is re-INVITEd to it (the consult) while the other party stays in the old session
 * with its audio blocked, held in silence; transferComplete or transferCancel follows.
 */
export async function transferRelayed(
  ctx: EngineContext,
  call: Call,
  pair: RelayedPair,
  target: TransferTarget,
  attended: boolean,
  /** Lets the user's side go once the target took its place (the call API hangs it up). */
  release?: () => Promise<void>,
): Promise<void> {
  const own = connected(call, pair);
  if (transfers.has(call)) throw new CallError('illegal-state', `call ${call.uuid} is being transferred`);
  const state: RelayedTransfer = { held: undefined, target: undefined, giveUp: undefined };
  transfers.set(call, state);
  const other = pair.otherOf(own);
  // Blind: the target takes the user's place; attended: the other party's, for the consult.
  const leaving = attended ? other : own;
  let consulting = false;
  try {
    const { uri, shown, record } = await targetLeg(ctx, call, target);
    let answered = false;
    const ringing = (leg: OutgoingCall) => {
      leg.onEnd(() => void record.end());
      const giveUp = () => {
        if (!answered) void leg.bye().catch(() => {});
      };
      state.giveUp = giveUp;
      const timer = call.setTimer(giveUp, TRANSFER_RING_SECONDS * 1000);
      void leg.result.then(() => call.clearTimer(timer));
      for (const party of pair.parties) party.onEnd(giveUp);
    };
    const dialled = await pair
      .dial((sdp) => ctx.ua.invite({ uri, ...shown, sdp }), leaving, ringing)
      .catch(async (error: unknown) => {
        await record.end();
        throw new CallError('fail', `the transfer target could not be called: ${String(error)}`);
      });
    if ('status' in dialled) throw new CallError('fail', `the transfer target answered ${dialled.status}`);
    answered = true;
    state.giveUp = undefined;
    record.answered();
    const heldIn = pair.session.callId;
    if (!(await pair.swap(leaving, dialled.leg, dialled.callId))) {
      void dialled.leg.bye().catch(() => {});
      throw new CallError('fail', 'the party to move did not take the new media session');
    }
    call.adopt(dialled.leg);
    if (!attended) {
      await (release ? release() : own.bye()).catch(() => {});
      return;
    }
    // The consult: the other party stays in the old session, whose audio to the user's phone
    // is blocked; it goes with the call should the call end first.
    consulting = true;
    state.held = other;
    state.target = dialled.leg;
    await ctx.options.rtpengine
      .request('block media', { 'call-id': heldIn, 'from-tag': tagOf(other) })
      .catch(() => {});
    void pair.ended.then(() => {
      if (transfers.get(call) === state) {
        transfers.delete(call);
        void other.bye().catch(() => {});
      }
    });
    other.onEnd(() => {
      // The held party hung up: nothing is left to transfer; the consult goes on as the call.
      if (transfers.get(call) === state) transfers.delete(call);
    });
  } finally {
    if (!consulting) transfers.delete(call);
  }
}

/** The consult of a relayed call's attended transfer; illegal-state when there is none. */
function consult(call: Call, pair: RelayedPair): { own: SipCall; held: SipCall; target: OutgoingCall } {
  const state = transfers.get(call);
  if (!state?.held || !state.target || pair.over || state.held.ended)
    throw new CallError('illegal-state', `call ${call.uuid} has no consult call`);
  return { own: ownSide(call, pair), held: state.held, target: state.target };
}

/** Attended transfer, complete: the held party joins the target in the user's place; the user's side is hung up. */
export async function completeRelayed(call: Call, pair: RelayedPair): Promise<void> {
  const { own, held } = consult(call, pair);
  transfers.delete(call);
  if (!(await pair.join(own, held))) throw new CallError('fail', 'the held party did not take the target');
  call.adopt(held);
  await own.bye().catch(() => {});
}

/**
 * Attended transfer, cancelled: the held party takes the target's place again; the target is hung
 * up. A transfer whose target still rings (blind or attended) is given up: the target's phone
 * stops ringing and the transfer ends `fail`, the call as it was.
 */
export async function cancelRelayed(call: Call, pair: RelayedPair): Promise<void> {
  const ringing = transfers.get(call)?.giveUp;
  if (ringing) return ringing();
  const { held, target } = consult(call, pair);
  transfers.delete(call);
  if (!(await pair.join(target, held))) throw new CallError('fail', 'the held party did not come back');
  await target.bye().catch(() => {});
}

/**
 * Bridge of two calls rtpengine relays: `other`'s other party takes the user's place in `call`
 * (a new session, re-INVITEs to both parties); the user's sides of both are hung up and `other`
 * ends (its pair lets its party go).
 */
export async function bridgeRelayed(
  call: Call,
  pair: RelayedPair,
  other: Call,
  otherPair: RelayedPair,
): Promise<void> {
  const own = connected(call, pair);
  const otherOwn = connected(other, otherPair);
  if (transfers.has(call) || transfers.has(other))
    throw new CallError('illegal-state', 'a call of the two is being transferred');
  const joining = otherPair.otherOf(otherOwn);
  if (!(await pair.join(own, joining))) throw new CallError('fail', "the other call's party did not move");
  otherPair.release(joining);
  call.adopt(joining);
  await own.bye().catch(() => {});
}
