/**
 * Dial-out into a room (docs/decisions.md "Conferences: member and room control"): a call
 * Zentrale places for the room's owner to a SIP account, a number or an external one, as the
 * call API's dial does (the partner's call filter for `call_api`, the owner's concurrent calls,
 * the owner's number shown), with a conference step instead of a bridge. Dialled out by one who
 * may write the room, the member is not asked the PIN.
 */
import type { Call } from '../calls/call.js';
import { type EngineContext, featureNumber, identityFor, outside, trackLeg } from '../calls/context.js';
import { parseDialled } from '../calls/dial.js';
import { originated, queuedApiCall } from '../calls/outbound.js';
import { MediaLeg } from '../media-leg.js';
import type { Room } from './room.js';

export interface RoomDial {
  readonly owner: string;
  /** The number shown (the owner's); none: anonymous. */
  readonly from: string | undefined;
  /** A SIP account by name or a number, as a phone dials. */
  readonly to: string;
  readonly ringSeconds: number;
}

/**
 * The call, queued before its INVITE leaves; undefined beyond the owner's concurrent-call bound.
 * `room` is asked for once the callee answered (a live room, or one opened then).
 */
export async function dialIntoRoom(
  ctx: EngineContext,
  request: RoomDial,
  room: () => Promise<Room>,
): Promise<Call | undefined> {
  const call = await queuedApiCall(ctx, request.owner, request.from);
  if (!call) return undefined;
  void intoRoom(ctx, call, request, room)
    .catch((error: unknown) =>
      ctx.options.log.error({ err: error, owner: request.owner }, 'room dial failed'),
    )
    .finally(() => call.end(call.status === 'in-progress' ? 'completed' : 'failed'));
  return call;
}

async function intoRoom(
  ctx: EngineContext,
  call: Call,
  request: RoomDial,
  room: () => Promise<Room>,
): Promise<void> {
  const { owner } = request;
  const identity = await ctx.routing.outgoingIdentity(owner, request.from);
  const dialled = parseDialled(request.to).kind === 'sip' ? request.to : featureNumber(request.to, identity);
  const target = dialled && (await outside(ctx, owner, dialled, 'call_api'));
  const record = trackLeg(ctx, {
    owner,
    service: 'call',
    direction: 'out',
    number: target && target !== 'denied' ? target.number : request.to,
    phone: request.from,
  });
  call.record = record;
  try {
    if (!target || target === 'denied') return;
    const leg = await MediaLeg.originate(ctx.ua, ctx.media, {
      uri: target.uri,
      ...identityFor(ctx, request.from, identity.clir, identity.assertedIdentity),
    });
    if (!(await originated(call, leg, request.ringSeconds))) return;
    record.answered();
    await enterAnswered(call, leg, room);
    if (!leg.call.ended) await leg.hangup();
  } finally {
    await record.end();
  }
}

/**
 * An answered call Zentrale placed joins the room `room` gives (no PIN: placed by one who may
 * write it); resolves when its time there is over. A room locked or full by then: nothing.
 */
export async function enterAnswered(call: Call, leg: MediaLeg, room: () => Promise<Room>): Promise<void> {
  try {
    const joined = await room();
    // The callee hanging up ends its time in the room (nothing else ends a call Zentrale placed).
    leg.call.onEnd(() => joined.leave(call.uuid));
    await joined.join(call);
  } catch {
    // Locked or full since the dial began: the callee hears nothing of the room.
  }
}
