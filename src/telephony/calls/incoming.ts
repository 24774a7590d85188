/**
 * The INVITEs Kamailio hands Zentrale, routed (STYLE.md: the engine reads routing through
 * CallRouting): a SIP account calls another by name, a number outside through the carrier, an
 * emergency number, a call feature (call-through, call-reverse), or a platform number, whose
 * answer runs as the call's step (number-call.ts). Each becomes a Call of this node's registry,
 * admitted against its owner's concurrent-call quota.
 */

import type { IncomingCall } from '../sip/index.js';
import { type BridgeOptions, bridge } from './bridge.js';
import { Call, type CallInit, type CallStatus, finalStatus } from './call.js';
import { HANDOVER_HEADER, HANDOVER_USER, handedOver, reverseCall } from './callreverse.js';
import {
  answerConference,
  forwardToHome,
  handedToRoom,
  ROOM_HEADER,
  ROOM_USER,
} from './conference-answer.js';
import {
  callerId,
  carrierTarget,
  type EngineContext,
  featureNumber,
  identityFor,
  isPlatformUri,
  MAX_RING_SECONDS,
  outside,
  trackLeg,
} from './context.js';
import { completeShort, parseDialled, uriUser } from './dial.js';
import type { SipAccountInfo } from './directory.js';
import { answerFax } from './fax-answer.js';
import { answerStep } from './number-call.js';
import { finish, NumberRun } from './number-run.js';
import type { TrackedLeg } from './record.js';
import { adoptBridged } from './relayed-media.js';

/** 110 (police) and 112 (rescue): emergency calls (spec "Partner API" emergency data). */
function isEmergency(digits: string): digits is '110' | '112' {
  return digits === '110' || digits === '112';
}

/**
 * Runs `body` as a Call of this node: registered while it runs, admitted as one of its owner's
 * concurrent calls (beyond the bound the caller gets 486), and ended with the status `body`
 * resolves with (its cleanup releases the admission), whatever happens. `always`: an emergency
 * call, counted but never refused.
 */
export async function counted(
  ctx: EngineContext,
  sip: IncomingCall,
  init: CallInit,
  body: (call: Call) => Promise<CallStatus>,
  always = false,
): Promise<void> {
  const call = new Call(init, ctx.options.clock);
  call.adopt(sip);
  if (!(await ctx.admit(call, always))) {
    sip.reject(486, 'Call Limit Reached');
    call.end('busy');
    return;
  }
  ctx.calls.add(call);
  let status: CallStatus = 'failed';
  try {
    status = await body(call);
  } finally {
    call.end(status);
  }
}

/**
 * Bridges the caller to the options' targets for `call`: its legs' CDRs are answered with it,
 * and ended in their order once the connected call ended. Resolves with the call's final status.
 */
async function bridgeLegs(
  ctx: EngineContext,
  sip: IncomingCall,
  call: Call,
  legs: readonly TrackedLeg[],
  options: BridgeOptions,
): Promise<CallStatus> {
  const outcome = await bridge(ctx.ua, ctx.options.rtpengine, ctx.options.clock, sip, {
    ...options,
    onConnected: adoptBridged(ctx, call),
  });
  const answered = outcome.answered !== null;
  if (answered) {
    call.setStatus('in-progress');
    for (const leg of legs) leg.answered();
  }
  await outcome.ended;
  for (const leg of legs) await leg.end();
  return finalStatus(answered, outcome.status);
}

/** A call of a SIP account going out (to another account, the carrier, an emergency centre). */
function accountCall(account: SipAccountInfo, number: string | undefined, party?: string): CallInit {
  return {
    direction: 'out',
    service: 'call',
    owner: account.owner,
    party,
    number,
    from: account.username,
    status: 'ringing',
  };
}

/** The CDR of a SIP account's call going out to `number`, shown as `phone`. */
function accountLeg(
  ctx: EngineContext,
  account: SipAccountInfo,
  number: string,
  phone: string | undefined,
): TrackedLeg {
  return trackLeg(ctx, { owner: account.owner, service: 'call', direction: 'out', number, phone });
}

export async function handle(ctx: EngineContext, call: IncomingCall): Promise<void> {
  const { proxy } = ctx.options;
  // Only Kamailio speaks to this port: it authenticated the phone or marked the carrier. The
  // exceptions: another node handing over a call-reverse call, with the process's token, or
  // sending on a caller for a room live here, with the room's token.
  if (call.remote.address !== proxy.address || call.remote.port !== proxy.port) {
    const token = call.request.headers.get(HANDOVER_HEADER.toLowerCase());
    const room = call.request.headers.get(ROOM_HEADER.toLowerCase());
    const user = uriUser(call.request.uri);
    if (token !== undefined && user === HANDOVER_USER) handedOver(ctx, call, token);
    else if (room !== undefined && user === ROOM_USER) return intoRoom(ctx, call, room);
    else call.reject(403);
    return;
  }
  const accountName = call.request.headers.get('x-zentrale-account');
  const fromCarrier = call.request.headers.get('x-zentrale-source') === 'carrier';
  // Kamailio marks every request of a phone (account) or of the carrier; an unmarked one is this
  // node's own call to a platform number, relayed back (platformUri).
  const fromPlatform = !accountName && !fromCarrier && isPlatformUri(call.request.uri);
  const account = accountName ? await ctx.routing.sipAccount(accountName) : undefined;
  if (!account && !fromCarrier && !fromPlatform) {
    call.reject(403);
    return;
  }
  const dialled = parseDialled(uriUser(call.request.uri), fromCarrier);
  const from = callerId(account, call) ?? 'anonymous';

  if (dialled.kind === 'invalid') {
    call.reject(404);
    return;
  }
  if (account && dialled.kind === 'short' && isEmergency(dialled.digits))
    return emergency(ctx, call, account, dialled.digits);
  if (account && (dialled.kind === 'sip' || dialled.kind === 'callthrough'))
    return fromAccount(ctx, call, account, dialled);
  let number = dialled.kind === 'number' ? dialled.number : undefined;
  if (account && dialled.kind === 'short') {
    // dial_prefix completes a short number (spec POST /api/dialplan).
    const { dialPrefix } = await ctx.routing.outgoingIdentity(account.owner);
    number = completeShort(dialled.digits, dialPrefix);
  }
  if (number === undefined) {
    call.reject(404);
    return;
  }

  const answer = await ctx.routing.numberAnswer(number);
  if (!answer) {
    // Not a platform number: the carrier, for SIP accounts only.
    if (!account) {
      call.reject(403);
      return;
    }
    return toCarrier(ctx, call, account, number);
  }
  if (account && !(await ctx.routing.callFilter(account.owner, number, 'sip')).allowed) {
    // The caller's partner filter covers calls to platform numbers too.
    call.reject(403);
    return;
  }
  if (answer.kind === 'disabled' || !answer.owner) {
    call.reject(480);
    return;
  }
  const owner = answer.owner;
  if (answer.kind === 'fax') {
    // A fax number answers every call as a fax machine, before any call feature waits for it.
    const init = { direction: 'in', service: 'fax', owner, number, from, status: 'ringing' } as const;
    return counted(ctx, call, init, (faxCall) => answerFax(ctx, call, faxCall, { owner, to: number, from }));
  }
  const caller = callerId(account, call);
  if (answer.kind === 'conference' || answer.kind === 'conference-offline') {
    // A conference's number takes every call into its room, before any call feature waits for it.
    const init = { direction: 'in', service: 'call', owner, number, from, status: 'ringing' } as const;
    const member = { number, from, phone: caller ?? undefined, user: account?.owner };
    // A room live on another node mixes there: the call is sent on to it.
    if (answer.kind === 'conference' && (await forwardToHome(ctx, call, answer.room, member))) return;
    return counted(ctx, call, init, (roomCall) => answerConference(ctx, call, roomCall, answer, member));
  }
  if (fromCarrier && caller) {
    // A call from outside may be the one a call feature waits for (spec "Call-through", callreverse).
    if (await reverseCall(ctx, call, owner, caller)) return;
    const phone = await ctx.routing.takeCallThrough(owner, caller);
    if (phone) return callThrough(ctx, call, owner, caller, phone, number);
  }
  const init = { direction: 'in', service: 'call', owner, number, from, status: 'ringing' } as const;
  await counted(ctx, call, init, async (numberCall) => {
    const leg = trackLeg(ctx, { owner, service: 'call', direction: 'in', number: from, phone: number });
    numberCall.record = leg;
    const run = new NumberRun(
      ctx,
      numberCall,
      call,
      { caller, instant: ctx.options.clock.now() },
      answer.announcementOnly === true,
      answerStep,
    );
    numberCall.push(answerStep(run, answer));
    // Every step list ends with an outcome (a redirect queues the next number's answer).
    const result = (await numberCall.run()) ?? finish(run, 480);
    if (result.answer !== null) leg.answered(result.answer * 1000);
    await leg.end(result.recording);
    return finalStatus(result.answer !== null, result.status);
  });
}

/**
 * A caller another node sent on to a room live here (conference-answer.ts forwardToHome): a call
 * to the conference's number of this node, admitted against the owner's concurrent calls here.
 */
async function intoRoom(ctx: EngineContext, call: IncomingCall, header: string): Promise<void> {
  const handed = handedToRoom(ctx, header);
  if (typeof handed === 'number') {
    call.reject(handed);
    return;
  }
  const { settings, caller } = handed;
  const answer = { kind: 'conference', owner: settings.owner, room: settings } as const;
  const init = {
    direction: 'in',
    service: 'call',
    owner: settings.owner,
    number: caller.number,
    from: caller.from,
    status: 'ringing',
  } as const;
  return counted(ctx, call, init, (roomCall) => answerConference(ctx, call, roomCall, answer, caller));
}

/** A SIP account dialled another account by name, a short number or a feature code. */
async function fromAccount(
  ctx: EngineContext,
  call: IncomingCall,
  account: SipAccountInfo,
  dialled: { kind: 'sip'; username: string } | { kind: 'callthrough' },
): Promise<void> {
  if (dialled.kind === 'callthrough') {
    const phone = await ctx.routing.takeCallThrough(account.owner);
    if (!phone) {
      call.reject(404, 'No Call-Through Pending');
      return;
    }
    return callThrough(ctx, call, account.owner, account.username, phone, undefined);
  }
  const verdict = await ctx.routing.callFilter(account.owner, dialled.username, 'sip');
  if (!verdict.allowed) {
    call.reject(403);
    return;
  }
  const callee = await ctx.routing.sipAccount(dialled.username);
  if (!callee) {
    call.reject(404);
    return;
  }
  const init = accountCall(account, account.callerId, callee.owner);
  await counted(ctx, call, init, (sipCall) => {
    const out = accountLeg(ctx, account, callee.username, account.callerId);
    sipCall.record = out;
    const incoming = trackLeg(
      ctx,
      { owner: callee.owner, service: 'call', direction: 'in', number: account.username },
      out,
    );
    return bridgeLegs(ctx, call, sipCall, [out, incoming], {
      groups: [[{ uri: `sip:${callee.username}@${callee.domain}` }]],
      timeout: 180,
      from: `sip:${account.username}@${account.domain}`,
      fromDisplay: account.username,
    });
  });
}

/** A SIP account's call to a number outside: dial_prefix done, clip/clir/PAI, call filter, quota. */
async function toCarrier(
  ctx: EngineContext,
  call: IncomingCall,
  account: SipAccountInfo,
  number: string,
): Promise<void> {
  const identity = await ctx.routing.outgoingIdentity(account.owner);
  const target = await outside(ctx, account.owner, number, 'sip');
  if (target === 'denied' || !target) {
    call.reject(403);
    return;
  }
  await counted(ctx, call, accountCall(account, identity.callerId), (carrierCall) => {
    const leg = accountLeg(ctx, account, target.number, identity.callerId);
    carrierCall.record = leg;
    return bridgeLegs(ctx, call, carrierCall, [leg], {
      groups: [[{ uri: target.uri }]],
      timeout: 180,
      ...identityFor(ctx, identity.callerId, identity.clir, identity.assertedIdentity),
    });
  });
}

/**
 * An emergency call (110 police, 112 rescue) from a SIP account (spec "Partner API" emergency
 * data): to the carrier, addressed to the control centre the user's partner set
 * (emergency_police, emergency_rescue; else the dialled 110/112 itself, for the carrier to
 * route), with uui_header as `User-to-User: <hex>;encoding=hex` (RFC 7433). Never held back:
 * no call filter, no dial_prefix, no concurrent-call quota (it counts, but is never refused),
 * and no CLIR: the control centre sees the caller id and the P-Asserted-Identity.
 */
async function emergency(
  ctx: EngineContext,
  call: IncomingCall,
  account: SipAccountInfo,
  digits: '110' | '112',
): Promise<void> {
  const { carrierUri } = ctx.options;
  if (!carrierUri) {
    call.reject(403);
    return;
  }
  const data = await ctx.routing.emergencyData(account.owner);
  const centre = (digits === '110' ? data?.police : data?.rescue) ?? digits;
  const identity = await ctx.routing.outgoingIdentity(account.owner);
  const caller = identityFor(ctx, identity.callerId, false, identity.assertedIdentity);
  const headers = [...caller.headers];
  if (data?.uuiHeader)
    headers.push(['User-to-User', `${Buffer.from(data.uuiHeader, 'utf8').toString('hex')};encoding=hex`]);
  await counted(
    ctx,
    call,
    accountCall(account, identity.callerId),
    (emergencyCall) => {
      const leg = accountLeg(ctx, account, centre, identity.callerId);
      emergencyCall.record = leg;
      return bridgeLegs(ctx, call, emergencyCall, [leg], {
        groups: [[{ uri: carrierTarget(carrierUri, encodeURIComponent(centre)) }]],
        timeout: MAX_RING_SECONDS,
        ...caller,
        headers,
      });
    },
    true,
  );
}

/**
 * Call-through (spec "Call-through"): the caller (`*98` from the user's SIP account, or the
 * filter number calling the user's number) is connected to the saved phone.
 */
async function callThrough(
  ctx: EngineContext,
  call: IncomingCall,
  owner: string,
  caller: string,
  phone: string,
  calledNumber: string | undefined,
): Promise<void> {
  const identity = await ctx.routing.outgoingIdentity(owner);
  const number = featureNumber(phone, identity);
  const target = number && (await outside(ctx, owner, number, 'call_through'));
  if (!target || target === 'denied') {
    call.reject(target === 'denied' ? 403 : 404);
    return;
  }
  const init = {
    direction: 'in',
    service: 'call_through',
    owner,
    number: calledNumber,
    from: caller,
    status: 'ringing',
  } as const;
  await counted(ctx, call, init, (throughCall) => {
    const incoming = trackLeg(ctx, {
      owner,
      service: 'call_through',
      direction: 'in',
      number: caller,
      phone: calledNumber,
    });
    throughCall.record = incoming;
    const out = trackLeg(
      ctx,
      { owner, service: 'call_through', direction: 'out', number: target.number, phone: identity.callerId },
      incoming,
    );
    return bridgeLegs(ctx, call, throughCall, [incoming, out], {
      groups: [[{ uri: target.uri }]],
      timeout: 180,
      ...identityFor(ctx, identity.callerId, identity.clir, identity.assertedIdentity),
    });
  });
}
