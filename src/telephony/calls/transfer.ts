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
import type { Call } from './call.js';
import type { EngineContext } from './context.js';
import { CallError } from './errors.js';
import type { LegPair } from './relay.js';
import {
  bridgeRelayed,
  cancelRelayed,
  completeRelayed,
  relayedPairOf,
  transferRelayed,
} from './relayed-transfer.js';
import { TRANSFER_RING_SECONDS, type TransferTarget, targetLeg } from './transfer-target.js';

export { TRANSFER_RING_SECONDS, type TransferTarget, TransferTargetError } from './transfer-target.js';

/** The pair of legs a call relays now (set by the call's runner, outbound.ts). */
const pairs = new WeakMap<Call, LegPair>();

/** `call` relays between `pair` from now on: a transfer may swap its user's leg. */
export function relaying(call: Call, pair: LegPair): void {
  pairs.set(call, pair);
}

/**
 * A transfer under way on a call: its target's leg, and for an attended one the party held
 * meanwhile (`held`, set once the consult call is up: the user talks with the target).
 */
interface Transfer {
  readonly attended: boolean;
  /** Set once the target answered. */
  leg: MediaLeg | undefined;
  held: MediaLeg | undefined;
  /** Hangs up the target's leg while it rings (the call's end, the ring timeout, a cancel). */
  giveUp: () => void;
  /** The target's leg is called and has not answered yet. */
  ringing: boolean;
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
  const relayedPair = relayedPairOf(call);
  if (relayedPair) return transferRelayed(ctx, call, relayedPair, target, attended);
  const { pair, own } = relayed(call);
  if (transfers.has(call)) throw new CallError('illegal-state', `call ${call.uuid} is being transferred`);
  const state: Transfer = { attended, leg: undefined, held: undefined, giveUp: () => {}, ringing: false };
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
    state.ringing = true;
    // Only while the target rings: once it answered, the pair decides when its leg ends.
    state.giveUp = () => {
      if (state.ringing) void leg.hangup().catch(() => {});
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
    state.ringing = false;
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
  const relayedPair = relayedPairOf(call);
  if (relayedPair) return completeRelayed(call, relayedPair);
  const { pair, own, state } = consulting(call);
  transfers.delete(call);
  pair.swap(own, state.held!);
  await own.hangup().catch(() => {});
}

/**
 * Attended transfer, cancelled: the target's leg is hung up and the user talks with the held
 * party again. A transfer whose target still rings (blind or attended) is given up: the target's
 * phone stops ringing and the transfer ends `fail`, the call as it was.
 */
export async function transferCancel(call: Call): Promise<void> {
  const relayedPair = relayedPairOf(call);
  if (relayedPair) return cancelRelayed(call, relayedPair);
  const ringing = transfers.get(call);
  if (ringing?.ringing) return ringing.giveUp();
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
  const [firstRelayed, secondRelayed] = [relayedPairOf(call), relayedPairOf(other)];
  if (firstRelayed && secondRelayed) return bridgeRelayed(call, firstRelayed, other, secondRelayed);
  // One of each: the party Zentrale's media worker carries cannot join an rtpengine session.
  if (firstRelayed || secondRelayed)
    throw new CallError('illegal-state', 'a call rtpengine relays bridges only with another such call');
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
