/**
 * Spec "Calls", POST /api/call/{uuid}/control `transfer` (docs/decisions.md "Call control:
 * transfer and bridge"): a blind transfer done by Zentrale as the B2BUA (Wazo calld's
 * /transfers: the transferred party, the initiator, the target). Zentrale dials the target
 * itself and, once it answered, connects the party on the other side of the user's call to it
 * and releases the user's own leg. No REFER reaches a phone, so it works with every phone and
 * with calls whose both legs Zentrale placed (click-to-dial), which no phone could transfer.
 *
 * The parties of such a call are two MediaLegs Zentrale relays between (relay.ts's LegPair,
 * which keeps which two are connected now, so that one of them can be swapped for another leg).
 */
import { MediaLeg } from '../media-leg.js';
import type { OutgoingCall, Referral, SipCall } from '../sip/index.js';
import type { Call } from './call.js';
import { type EngineContext, identityFor, outside, trackLeg } from './context.js';
import { parseDialled, uriUser } from './dial.js';
import { CallError } from './errors.js';
import type { LegPair } from './relay.js';
import type { RelayedPair } from './relayed-pair.js';

/** The pair of legs a call relays now (set by the call's runner, outbound.ts). */
const pairs = new WeakMap<Call, LegPair>();

/** `call` relays between `pair` from now on: a transfer may swap its user's leg. */
export function relaying(call: Call, pair: LegPair): void {
  pairs.set(call, pair);
}

/** The pair of dialogs a call rtpengine relays (set by the bridge's onConnected, relayed-media.ts). */
const bridged = new WeakMap<Call, RelayedPair>();

/**
 * `call`'s media is relayed by rtpengine between `pair`'s parties: a transfer may swap the
 * user's. The user's own phone may ask for one too (a blind REFER, RFC 3515), refused with 603
 * while nothing is to transfer; the other party's REFER stays refused (603): it is not the call
 * owner's phone, and the owner's call filter and identity would apply to its transfer.
 */
export function relayingPair(ctx: EngineContext, call: Call, pair: RelayedPair): void {
  bridged.set(call, pair);
  const own = ownSide(call, pair);
  own.onRefer((referral) => void referred(ctx, call, pair, own, referral));
}

/** The user's side of a call rtpengine relays: the caller of a call going out, else the answering leg. */
function ownSide(call: Call, pair: RelayedPair): SipCall {
  return pair.parties[call.direction === 'out' ? 0 : 1];
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
    await transferBridged(ctx, call, pair, target, false, async () => {
      await notify(200, 'OK');
      call.setTimer(() => void own.bye().catch(() => {}), REFERRER_LINGER_MS);
    });
  } catch (error) {
    if (error instanceof TransferTargetError) return notify(error.kind === 'sip' ? 404 : 403, 'Forbidden');
    await notify(error instanceof CallError && error.code === 'illegal-state' ? 491 : 480, 'Unavailable');
  }
}

/** Where a transfer goes: a SIP account of the platform, or a number (E.164). */
export type TransferTarget = { readonly sip: string } | { readonly phone: string };

/** A transfer target that does not exist (sip: wrong-sip) or that the call filter refuses (phone). */
export class TransferTargetError extends Error {
  constructor(
    readonly kind: 'sip' | 'filtered',
    message: string,
  ) {
    super(message);
    this.name = 'TransferTargetError';
  }
}

/** How long a phone that asked for a transfer (REFER) may stay after its NOTIFY 200 before it is hung up. */
const REFERRER_LINGER_MS = 5000;

/** Seconds the target of a transfer rings before the transfer fails. */
export const TRANSFER_RING_SECONDS = 30;

/**
 * A transfer under way on a call: its target's leg, and for an attended one the party held
 * meanwhile (`held`, set once the consult call is up: the user talks with the target).
 */
interface Transfer {
  readonly attended: boolean;
  /** Set once the target answered. */
  leg: MediaLeg | undefined;
  held: MediaLeg | undefined;
  /** Hangs up the target's leg while it rings (the call's end, the ring timeout). */
  giveUp: () => void;
}

/** Transfers under way, so that a second one on the same call is illegal-state. */
const transfers = new WeakMap<Call, Transfer>();

/** The pair `call` relays and the user's leg in it; illegal-state unless both are up. */
function relayed(call: Call): { pair: LegPair; own: MediaLeg } {
  const pair = pairs.get(call);
  const own = call.leg;
  if (!pair || pair.over || !own || !pair.legs.includes(own) || call.ended)
    throw new CallError('illegal-state', `call ${call.uuid} connects no two parties Zentrale relays`);
  return { pair, own };
}

/** The leg of the pair that is not `leg`. */
function otherOf(pair: LegPair, leg: MediaLeg): MediaLeg {
  return pair.legs[0] === leg ? pair.legs[1] : pair.legs[0];
}

/**
 * Transfer of `call` of its owner to `target`. Blind: the party on the other side of the user's
 * leg is connected to the target once it answers, and the user's leg is hung up. Attended: once
 * the target answers, the user talks with it (the consult) while the other party is held (it
 * hears silence); transferComplete or transferCancel follows. Resolves when the target answered
 * and the legs were swapped; a target that does not answer (or the call ended meanwhile) is
 * CallError `fail`, and the call stays as it was.
 * illegal-state for a call that does not relay two answered legs, or that transfers already.
 */
export async function transfer(
  ctx: EngineContext,
  call: Call,
  target: TransferTarget,
  attended = false,
): Promise<void> {
  const relayedPair = bridged.get(call);
  if (relayedPair) return transferBridged(ctx, call, relayedPair, target, attended);
  const { pair, own } = relayed(call);
  if (transfers.has(call)) throw new CallError('illegal-state', `call ${call.uuid} is being transferred`);
  const state: Transfer = { attended, leg: undefined, held: undefined, giveUp: () => {} };
  transfers.set(call, state);
  try {
    const { uri, shown, record } = await targetLeg(ctx, call, target);
    const leg = await MediaLeg.originate(ctx.ua, ctx.media, { uri, ...shown }).catch(
      async (error: unknown) => {
        await record.end();
        throw error;
      },
    );
    leg.call.onEnd(() => void record.end());
    let ringing = true;
    // Only while the target rings: once it answered, the pair decides when its leg ends.
    state.giveUp = () => {
      if (ringing) void leg.hangup().catch(() => {});
    };
    const timer = call.setTimer(state.giveUp, TRANSFER_RING_SECONDS * 1000);
    pair.legs[0].call.onEnd(state.giveUp);
    pair.legs[1].call.onEnd(state.giveUp);
    const result = await leg.result;
    call.clearTimer(timer);
    if (result.status < 200 || result.status >= 300 || leg.call.ended || pair.over) {
      state.giveUp();
      throw new CallError('fail', `the transfer target answered ${result.status}`);
    }
    ringing = false;
    record.answered();
    state.leg = leg;
    // The call's dialogs: an API hangup from now on ends the target's leg, and with it the pair.
    call.adopt(leg.call);
    if (!attended) {
      pair.swap(own, leg);
      transfers.delete(call);
      await own.hangup().catch(() => {});
      return;
    }
    // The consult: the user with the target; the other party leaves the pair, held in silence,
    // and is hung up with the call should the call end before it is connected again.
    const held = otherOf(pair, own);
    state.held = held;
    pair.swap(held, leg);
    void pair.ended.then(() => {
      if (transfers.get(call) === state) {
        transfers.delete(call);
        void held.hangup().catch(() => {});
      }
    });
    held.call.onEnd(() => {
      // The held party hung up: nothing is left to transfer; the consult goes on as the call.
      if (transfers.get(call) === state) transfers.delete(call);
    });
  } catch (error) {
    transfers.delete(call);
    throw error;
  }
}

/**
 * Blind transfer of a call rtpengine relays between two phones: the user's side (the caller of a
 * call going out, the answering leg of a call coming in) is swapped for the target's leg once it
 * answered (relayed-pair.ts), then hung up. An attended transfer there is illegal-state: the
 * consult would need a third rtpengine session towards the user's phone (decisions.md).
 */
async function transferBridged(
  ctx: EngineContext,
  call: Call,
  pair: RelayedPair,
  target: TransferTarget,
  attended: boolean,
  /** Lets the user's side go once the target took its place (the call API hangs it up). */
  release?: () => Promise<void>,
): Promise<void> {
  const own = ownSide(call, pair);
  if (pair.over || call.ended || pair.parties.some((party) => !party.dialog || party.ended))
    throw new CallError('illegal-state', `call ${call.uuid} connects no two parties`);
  if (attended)
    throw new CallError(
      'illegal-state',
      `call ${call.uuid} is relayed between two phones: blind transfer only`,
    );
  if (transfers.has(call)) throw new CallError('illegal-state', `call ${call.uuid} is being transferred`);
  transfers.set(call, { attended, leg: undefined, held: undefined, giveUp: () => {} });
  try {
    const { uri, shown, record } = await targetLeg(ctx, call, target);
    let answered = false;
    const ringing = (leg: OutgoingCall) => {
      leg.onEnd(() => void record.end());
      const giveUp = () => {
        if (!answered) void leg.bye().catch(() => {});
      };
      const timer = call.setTimer(giveUp, TRANSFER_RING_SECONDS * 1000);
      void leg.result.then(() => call.clearTimer(timer));
      for (const party of pair.parties) party.onEnd(giveUp);
    };
    const dialled = await pair
      .dial((sdp) => ctx.ua.invite({ uri, ...shown, sdp }), own, ringing)
      .catch(async (error: unknown) => {
        await record.end();
        throw new CallError('fail', `the transfer target could not be called: ${String(error)}`);
      });
    if ('status' in dialled) throw new CallError('fail', `the transfer target answered ${dialled.status}`);
    answered = true;
    record.answered();
    if (!(await pair.swap(own, dialled.leg, dialled.callId)))
      throw new CallError('fail', 'the other party did not take the new media session');
    call.adopt(dialled.leg);
    await (release ? release() : own.bye()).catch(() => {});
  } finally {
    transfers.delete(call);
  }
}

/** The attended transfer of `call` in its consult; illegal-state when there is none. */
function consulting(call: Call): { pair: LegPair; own: MediaLeg; state: Transfer } {
  const { pair, own } = relayed(call);
  const state = transfers.get(call);
  if (!state?.attended || !state.held || !state.leg)
    throw new CallError('illegal-state', `call ${call.uuid} has no consult call`);
  return { pair, own, state };
}

/** Attended transfer, complete: the held party and the target talk, the user's leg is hung up. */
export async function transferComplete(call: Call): Promise<void> {
  const { pair, own, state } = consulting(call);
  transfers.delete(call);
  pair.swap(own, state.held!);
  await own.hangup().catch(() => {});
}

/** Attended transfer, cancelled: the target's leg is hung up and the user talks with the held party again. */
export async function transferCancel(call: Call): Promise<void> {
  const { pair, state } = consulting(call);
  transfers.delete(call);
  pair.swap(state.leg!, state.held!);
  await state.leg!.hangup().catch(() => {});
}

/**
 * Bridge: the other parties of two calls of the user talk with each other; the user's legs of
 * both are hung up. `call` carries on with both parties (its uuid, its CDR), `other` ends
 * (completed). illegal-state unless both relay two answered legs and neither transfers.
 */
export async function bridgeCalls(call: Call, other: Call): Promise<void> {
  if (call === other) throw new CallError('illegal-state', 'a call cannot be bridged with itself');
  const first = relayed(call);
  const second = relayed(other);
  if (transfers.has(call) || transfers.has(other))
    throw new CallError('illegal-state', 'a call of the two is being transferred');
  const joining = otherOf(second.pair, second.own);
  // The other call's pair lets its party go and ends (its runner ends the call), then this
  // call's pair takes it in place of the user's leg.
  second.pair.release(joining);
  first.pair.swap(first.own, joining);
  call.adopt(joining.call);
  await Promise.all([first.own.hangup().catch(() => {}), second.own.hangup().catch(() => {})]);
}

/**
 * Where the target's leg goes, as whom, and its record: a leg of the call like the others, with
 * its own CDR, a child of the call's first.
 */
async function targetLeg(ctx: EngineContext, call: Call, target: TransferTarget) {
  const owner = call.owner!;
  const { uri, number } = await targetOf(ctx, owner, target);
  const identity = await ctx.routing.outgoingIdentity(owner, call.number);
  const shown = identityFor(ctx, call.number, identity.clir, identity.assertedIdentity);
  const record = trackLeg(
    ctx,
    { owner, service: call.service, direction: 'out', number, phone: call.number },
    call.record,
  );
  return { uri, shown, record };
}

/**
 * The SIP URI of a transfer target and the number its CDR names: any SIP account by name, a
 * number through the carrier after the call filter.
 */
async function targetOf(
  ctx: EngineContext,
  owner: string,
  target: TransferTarget,
): Promise<{ uri: string; number: string }> {
  if ('sip' in target) {
    const account = await ctx.routing.sipAccount(target.sip);
    if (!account) throw new TransferTargetError('sip', `no SIP account ${target.sip}`);
    return { uri: `sip:${account.username}@${account.domain}`, number: account.username };
  }
  const found = await outside(ctx, owner, target.phone, 'call_api');
  if (found === 'denied')
    throw new TransferTargetError('filtered', `the call filter refuses ${target.phone}`);
  if (!found) throw new CallError('fail', `no route to ${target.phone}`);
  return found;
}
