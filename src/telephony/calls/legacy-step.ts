/** The owner's legacy dialplan as a call's step (decideLegacyDialplan decides). */
import { decideLegacyDialplan, type LegacyTarget } from '../decisions/index.js';
import { ringTone } from '../media/index.js';
import type { BridgeOutcome, BridgeTarget } from './bridge.js';
import type { CallOutcome } from './call.js';
import { joinReverse, startCallReverse } from './callreverse.js';
import { MAX_RING_SECONDS, targetUri } from './context.js';
import { answered, connect, finish, type NumberRun, ring, voicemail, waitRinging } from './number-run.js';

/**
 * The owner's legacy dialplan (decideLegacyDialplan): the call situation rings its targets for
 * the ring timeout; no answer leads to the timeout (ring timeout passed), busy (486) or
 * unavailable (any other failure) action.
 */
export async function runLegacy(run: NumberRun): Promise<CallOutcome> {
  const dialplan = await run.ctx.routing.legacyDialplan(run.owner);
  let decision = decideLegacyDialplan(dialplan, 'call');
  if (dialplan.announcement)
    run.ringtone = { announcement: dialplan.announcement, mix: dialplan.mix_ringtone === true };
  if (decision.situation === 'call' && decision.targets.length > 0) {
    const targets = await legacyTargets(run, decision.targets);
    const reverse = decision.targets.some((target) => 'callreverse' in target)
      ? await startCallReverse(run)
      : undefined;
    // The ring timeout is a duration: measured on the monotonic clock, not the wall clock.
    const started = performance.now();
    const ringFor = decision.ringTimeout ?? MAX_RING_SECONDS;
    let outcome: BridgeOutcome;
    try {
      if (reverse && !run.ringtone) {
        // The reverse call is joined to the caller's leg: Zentrale answers with the ring tone.
        const leg = await answered(run);
        if (leg) void leg.endpoint.play(ringTone());
      }
      const ringing =
        targets.length > 0
          ? ring(run, [targets], ringFor, true, reverse?.signal)
          : reverse
            ? waitRinging(run, ringFor, reverse.signal)
            : Promise.resolve({ status: 480, answered: null, ended: Promise.resolve() });
      outcome = await ringing;
      const left = ringFor * 1000 - (performance.now() - started);
      if (reverse && !reverse.arrived() && outcome.status !== 200 && outcome.status !== 0 && left > 0) {
        // The other targets failed: the caller keeps waiting for the reverse call until the ring timeout.
        const waited = await waitRinging(run, left / 1000, reverse.signal);
        if (waited.status === 0) outcome = waited;
      }
      const joined = reverse?.arrived();
      if (joined) {
        if (run.leg && !run.sip.ended && outcome.status !== 200)
          return await joinReverse(run, run.leg, joined);
        joined.reject(486);
      }
    } finally {
      await reverse?.stop();
    }
    if (outcome.status === 200) {
      await outcome.ended;
      return { answer: run.leg ? run.answered : outcome.answered, status: 200, recording: null };
    }
    if (outcome.status === 0 || run.sip.ended) return { answer: run.answered, status: 0, recording: null };
    const timedOut =
      decision.ringTimeout !== undefined && performance.now() - started >= decision.ringTimeout * 1000 - 500;
    decision = decideLegacyDialplan(
      dialplan,
      outcome.status === 486 ? 'busy' : timedOut ? 'timeout' : 'unavailable',
    );
  }
  switch (decision.action) {
    case 'reject':
      return finish(run, decision.situation === 'call' ? 403 : 480);
    case 'none':
      return finish(run, decision.situation === 'busy' ? 486 : 480);
    case 'record':
      return voicemail(run, dialplan.announcement);
    case 'redirect':
    case 'sip': {
      const targets = await legacyTargets(run, decision.targets);
      if (targets.length === 0) return finish(run, 480);
      return connect(run, [targets], MAX_RING_SECONDS);
    }
  }
}

/** A legacy dialplan's targets as URIs (call-reverse is a process, not a URI: startCallReverse). */
export async function legacyTargets(
  run: NumberRun,
  targets: readonly LegacyTarget[],
): Promise<BridgeTarget[]> {
  const uris: BridgeTarget[] = [];
  for (const target of targets) {
    const uri =
      'sip' in target
        ? await targetUri(run.ctx, target.sip, run.owner, 'dialplan')
        : 'phone' in target
          ? await targetUri(run.ctx, target.phone, run.owner, 'dialplan')
          : undefined;
    if (uri) uris.push({ uri });
  }
  return uris;
}
