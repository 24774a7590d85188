/**
 * Where a transfer goes (POST /api/call/{uuid}/control `transfer`, a phone's REFER): the
 * target's shape, its SIP URI after the partner's call filter, and its leg's record. Shared by
 * the transfers of calls Zentrale relays (transfer.ts) and of calls rtpengine relays
 * (relayed-transfer.ts).
 */
import type { Call } from './call.js';
import { type EngineContext, identityFor, outside, trackLeg } from './context.js';
import { CallError } from './errors.js';

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

/**
 * Where the target's leg goes, as whom, and its record: a leg of the call like the others, with
 * its own CDR, a child of the call's first.
 */
export async function targetLeg(ctx: EngineContext, call: Call, target: TransferTarget) {
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
