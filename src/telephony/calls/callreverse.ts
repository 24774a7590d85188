/**
 * Call-reverse (spec POST /api/dialplan/callreverse; legacy callreverse_enable) as the legacy
 * step runs it: the waiting caller's process, the reverse call joined to it, and the hand-over
 * of a reverse call that reached another node than the one holding the process.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MediaLeg as MediaLegType } from '../media-leg.js';
import { MediaLeg } from '../media-leg.js';
import { remoteOfUri } from '../sip/dialog.js';
import type { IncomingCall, Remote } from '../sip/index.js';
import { type BridgeOptions, bridge } from './bridge.js';
import type { CallOutcome } from './call.js';
import { ALIVE_MS, callerId, type EngineContext, trackLeg } from './context.js';
import type { ReverseHolder } from './directory.js';
import { finish, type NumberRun } from './number-run.js';
import { connectLegs } from './relay.js';

/**
 * How long a call-reverse hand-over (another node's process) may go unanswered before the call
 * is this node's own again: the holder answers at once, so only a node gone silent takes this.
 */
const HANDOVER_SECONDS = 8;
/**
 * How long the holder's UA may take to answer the OPTIONS probe before a hand-over: a node that
 * died within its last heartbeats answers nothing, and an INVITE to it would hold the reverse
 * caller for the 32 s of SIP timer B.
 */
const HANDOVER_PROBE_MS = 2000;
/** Request-URI user and header of a call-reverse hand-over between nodes (handOver). */
export const HANDOVER_USER = 'callreverse';
export const HANDOVER_HEADER = 'X-Zentrale-Reverse';

/** Compares two secrets in constant time (their SHA-256, so that lengths differing leak nothing). */
export function sameSecret(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Call-reverse (spec POST /api/dialplan/callreverse; legacy callreverse_enable): the owner
 * hears of the call (dialplan_callreverse_start), sets the number it will call from, and that
 * number's call to one of the owner's numbers is joined to the waiting caller. `signal` aborts
 * the other targets' ringing once it arrived; `stop` ends the process (dialplan_callreverse_stop).
 */
export async function startCallReverse(run: NumberRun) {
  const controller = new AbortController();
  let taken: IncomingCall | undefined;
  const take = (call: IncomingCall) => {
    if (taken || controller.signal.aborted || run.sip.ended) return false;
    taken = call;
    controller.abort();
    return true;
  };
  // The capability another node presents to hand the reverse call over (handOver).
  const process = { token: randomBytes(24).toString('base64url'), take };
  run.ctx.reversing.set(run.owner, process);
  // Another node judges the holder alive by the caller's running row (legAlive): the process
  // is announced once that row is written (leg writes wait for their batch, up to 50 ms).
  await run.record?.stored;
  await run.ctx.recorder.callReverseStarted(run.owner, run.from, run.number, {
    leg: run.record?.id ?? null,
    address: run.ctx.address,
    token: process.token,
  });
  return {
    signal: controller.signal,
    arrived: () => taken,
    stop: async () => {
      if (run.ctx.reversing.get(run.owner) === process) run.ctx.reversing.delete(run.owner);
      if (!controller.signal.aborted) controller.abort();
      await run.ctx.recorder
        .callReverseStopped(run.owner, run.from, run.number, run.record?.id ?? null)
        .catch((error: unknown) => run.ctx.options.log.warn({ err: error }, 'callreverse stop failed'));
    },
  };
}

/** The reverse call is answered and joined to the waiting caller; its CDR is a call_reverse child of the caller's. */
export async function joinReverse(
  run: NumberRun,
  callerLeg: MediaLegType,
  call: IncomingCall,
): Promise<CallOutcome> {
  const caller = callerId(undefined, call) ?? 'anonymous';
  const record = trackLeg(
    run.ctx,
    { owner: run.owner, service: 'call_reverse', direction: 'in', number: caller, phone: run.number },
    run.record,
  );
  const leg = await MediaLeg.accept(call, run.ctx.media);
  try {
    if (leg) await leg.answer();
  } catch {
    // The reverse caller gave up meanwhile.
  }
  if (!leg || call.ended) {
    void record.end();
    return finish(run, 480);
  }
  record.answered();
  await connectLegs(callerLeg, leg);
  // Written after the caller's record, its parent, which ends once this returns.
  void record.end();
  return { answer: run.answered, status: 200, recording: null };
}

/**
 * A call from outside to one of the owner's numbers: when its caller is the filter of the
 * owner's call-reverse process, it is joined to the waiting caller, here or (the process runs
 * on another node, alive) handed over to that node. False: an ordinary call to the number.
 */
export async function reverseCall(
  ctx: EngineContext,
  call: IncomingCall,
  owner: string,
  caller: string,
): Promise<boolean> {
  const process = await ctx.routing.callReverse(owner);
  if (process?.filter !== caller) return false;
  const local = ctx.reversing.get(owner);
  const holder = process.holder;
  if (local && (!holder || sameSecret(local.token, holder.token))) return local.take(call);
  if (!holder?.leg || !(await ctx.routing.legAlive(holder.leg, ctx.options.clock.now() - ALIVE_MS)))
    return local?.take(call) ?? false;
  return handOver(ctx, call, owner, caller, holder);
}

/**
 * Hands a reverse call over to the node holding the process (a B2BUA leg straight to its UA,
 * media relayed by this node's rtpengine as every bridged call is). Its CDRs are the holder's;
 * this node writes none for the hand-over. False when the holder did not take it (gone,
 * token refused, the caller gave up meanwhile): the call is then this node's ordinary call.
 */
export async function handOver(
  ctx: EngineContext,
  call: IncomingCall,
  owner: string,
  caller: string,
  holder: ReverseHolder,
): Promise<boolean> {
  const sent = await sendOn(ctx, call, `sip:${HANDOVER_USER}@${holder.address}`, {
    timeout: HANDOVER_SECONDS,
    from: `sip:${caller}@${ctx.options.host}`,
    fromDisplay: caller,
    headers: [[HANDOVER_HEADER, `${owner} ${holder.token}`]],
  });
  if (sent === true) return true;
  ctx.options.log.info({ owner, holder: holder.address, status: sent }, 'callreverse not handed over');
  return false;
}

/**
 * Sends `call` on to another node's user agent at `uri` (a B2BUA leg straight to it, media
 * relayed by this node's rtpengine as every bridged call is): true once that call is over (or
 * the caller gave up meanwhile), else why the other node did not take it (its SIP status, or
 * 'unreachable' when its UA answers no OPTIONS); the caller is then still this node's.
 */
export async function sendOn(
  ctx: EngineContext,
  call: IncomingCall,
  uri: string,
  options: Pick<BridgeOptions, 'timeout' | 'from' | 'fromDisplay' | 'headers'>,
): Promise<true | number | 'unreachable'> {
  const target = remoteOfUri(uri);
  if (!target || !(await reachable(ctx, uri, target))) return 'unreachable';
  const outcome = await bridge(ctx.ua, ctx.options.rtpengine, ctx.options.clock, call, {
    ...options,
    groups: [[{ uri, target }]],
    keepCallerOnFailure: true,
  });
  if (outcome.status === 200) {
    await outcome.ended;
    return true;
  }
  return call.ended ? true : outcome.status;
}

/** The SIP user agent at `target` answers an OPTIONS within HANDOVER_PROBE_MS (any status). */
export function reachable(ctx: EngineContext, uri: string, target: Remote): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), HANDOVER_PROBE_MS);
    ctx.ua.request({ method: 'OPTIONS', uri, target }).then(
      (response) => {
        clearTimeout(timer);
        resolve(response.status !== 408);
      },
      () => {
        clearTimeout(timer);
        resolve(false);
      },
    );
  });
}

/**
 * Another node hands over a reverse call (handOver): `X-Zentrale-Reverse: <owner> <token>`.
 * Joined like the reverse call arriving here when the token is the owner's waiting process's;
 * 403 otherwise (nothing joined), 480 when the process no longer takes it.
 */
export function handedOver(ctx: EngineContext, call: IncomingCall, header: string): void {
  const [owner = '', token = ''] = header.trim().split(/\s+/);
  const waiting = ctx.reversing.get(owner);
  if (!waiting || !sameSecret(waiting.token, token)) {
    call.reject(403);
    return;
  }
  if (!waiting.take(call)) call.reject(480);
}
