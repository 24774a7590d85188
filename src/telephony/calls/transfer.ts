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
import { type EngineContext, identityFor, outside } from './context.js';
import { CallError } from './errors.js';
import type { LegPair } from './relay.js';

/** The pair of legs a call relays now (set by the call's runner, outbound.ts). */
const pairs = new WeakMap<Call, LegPair>();

/** `call` relays between `pair` from now on: a transfer may swap its user's leg. */
export function relaying(call: Call, pair: LegPair): void {
  pairs.set(call, pair);
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

/** Seconds the target of a transfer rings before the transfer fails. */
export const TRANSFER_RING_SECONDS = 30;

/** Transfers in progress, so that a second one on the same call is illegal-state. */
const transferring = new WeakSet<Call>();

/**
 * Blind transfer of `call` of its owner: the party on the other side of the user's leg is
 * connected to `target` once it answers, and the user's leg is hung up. Resolves when the
 * target answered and the swap was made; a target that does not answer (or the call ended
 * meanwhile) is CallError `fail`, and the call stays as it was. illegal-state for a call that
 * does not relay two answered legs, or that transfers already.
 */
export async function blindTransfer(ctx: EngineContext, call: Call, target: TransferTarget): Promise<void> {
  const pair = pairs.get(call);
  const own = call.leg;
  if (!pair || pair.over || !own || !pair.legs.includes(own) || call.ended)
    throw new CallError('illegal-state', `call ${call.uuid} connects no two parties Zentrale relays`);
  if (transferring.has(call)) throw new CallError('illegal-state', `call ${call.uuid} is being transferred`);
  const owner = call.owner!;
  transferring.add(call);
  try {
    const uri = await targetUri(ctx, owner, target);
    const identity = await ctx.routing.outgoingIdentity(owner, call.number);
    const shown = identityFor(ctx, call.number, identity.clir, identity.assertedIdentity);
    const leg = await MediaLeg.originate(ctx.ua, ctx.media, { uri, ...shown });
    let ringing = true;
    // Only while the target rings: once it answered, the pair decides when its leg ends.
    const giveUp = () => {
      if (ringing) void leg.hangup().catch(() => {});
    };
    const timer = call.setTimer(giveUp, TRANSFER_RING_SECONDS * 1000);
    pair.legs[0].call.onEnd(giveUp);
    pair.legs[1].call.onEnd(giveUp);
    const result = await leg.result;
    call.clearTimer(timer);
    if (result.status < 200 || result.status >= 300 || leg.call.ended || pair.over) {
      giveUp();
      throw new CallError('fail', `the transfer target answered ${result.status}`);
    }
    ringing = false;
    pair.swap(own, leg);
    // The call's dialogs: an API hangup from now on ends the target's leg, and with it the pair.
    call.adopt(leg.call);
    await own.hangup().catch(() => {});
  } finally {
    transferring.delete(call);
  }
}

/** The SIP URI of a transfer target: any SIP account by name, a number through the carrier after the call filter. */
async function targetUri(ctx: EngineContext, owner: string, target: TransferTarget): Promise<string> {
  if ('sip' in target) {
    const account = await ctx.routing.sipAccount(target.sip);
    if (!account) throw new TransferTargetError('sip', `no SIP account ${target.sip}`);
    return `sip:${account.username}@${account.domain}`;
  }
  const found = await outside(ctx, owner, target.phone, 'call_api');
  if (found === 'denied')
    throw new TransferTargetError('filtered', `the call filter refuses ${target.phone}`);
  if (!found) throw new CallError('fail', `no route to ${target.phone}`);
  return found.uri;
}
