/**
 * The v2 dialplan as a call's step (decideDialplan, stepPin decide): reject, play, record,
 * parallel/linear/cyclic ringing and pin, profile by profile.
 */
import {
  type CompiledDialplan,
  type CompiledProfile,
  compiledPin,
  decideDialplan,
  orderTargets,
  selectActions,
  stepPin,
  type Target,
} from '../decisions/index.js';
import type { BridgeTarget } from './bridge.js';
import type { CallOutcome } from './call.js';
import { DEFAULT_RING_SECONDS, MAX_RING_SECONDS, targetUri } from './context.js';
import { DtmfInput } from './dtmf-input.js';
import { answered, connect, finish, type NumberRun, play, voicemail } from './number-run.js';

/** An action's ring time: unset is the default; below 1 means until the network gives up (spec). */
function ringSeconds(timeout: number | undefined): number {
  if (timeout === undefined) return DEFAULT_RING_SECONDS;
  return timeout >= 1 ? timeout : MAX_RING_SECONDS;
}

/** The v2 dialplan from profile `from` on. */
export function runDialplan(run: NumberRun, dialplan: CompiledDialplan, from: number): Promise<CallOutcome> {
  const decision = decideDialplan(dialplan, run.situation, { from });
  const profile = decision.profile === null ? undefined : dialplan.profiles[decision.profile];
  if (!profile) return Promise.resolve(finish(run, 480));
  return runProfile(run, dialplan, profile, profile.index);
}

/** One dialplan action; `top` is the index of the profile it belongs to (for a pin's fallback). */
export async function runProfile(
  run: NumberRun,
  dialplan: CompiledDialplan,
  profile: CompiledProfile,
  top: number,
): Promise<CallOutcome> {
  const action = profile.action;
  switch (action.name) {
    case 'reject':
      return finish(run, 403);
    case 'play': {
      const leg = await answered(run);
      if (!leg) return { answer: null, status: run.sip.ended ? 0 : 488, recording: null };
      await play(run, leg, action.params.announcement);
      return finish(run, 200);
    }
    case 'record':
      return voicemail(run, action.params.announcement);
    case 'parallel':
    case 'linear':
    case 'cyclic': {
      const targets: BridgeTarget[] = [];
      const list =
        action.name === 'parallel'
          ? action.params.targets.map((target) => ({ target }))
          : orderTargets(
              action.params.targets,
              action.name,
              action.name === 'cyclic'
                ? // The action: its top profile and its index there (a pin's items are one level down).
                  await cyclicStart(run, `${top}/${profile.index}`, action.params.targets.length)
                : 0,
            );
      for (const { target, timeout, clip_number } of list as Target[]) {
        const uri = await targetUri(run.ctx, target, run.owner, 'dialplan');
        if (!uri) continue;
        targets.push({
          uri,
          // Spec: a timeout below 1 means until the network gives up.
          timeout: timeout !== undefined && timeout >= 1 ? timeout : undefined,
          // A linear or cyclic target's own clip_number is the caller id it sees (over the action's).
          ...(clip_number
            ? { from: `sip:${clip_number}@${run.ctx.options.host}`, fromDisplay: clip_number }
            : {}),
        });
      }
      if (targets.length === 0) return finish(run, 480);
      return connect(
        run,
        action.name === 'parallel' ? [targets] : targets.map((target) => [target]),
        ringSeconds(action.params.timeout),
        action.params.clip_number,
      );
    }
    case 'pin':
      return runPin(run, dialplan, profile, top);
  }
}

/**
 * The items of a pin's action array that run for this call, in order: a `play` plays and the
 * next item follows; any other action takes the call over. After a last `play`, Zentrale hangs up.
 */
export async function runItems(
  run: NumberRun,
  dialplan: CompiledDialplan,
  items: CompiledProfile[],
  top: number,
): Promise<CallOutcome | undefined> {
  for (const item of items) {
    if (selectActions(dialplan, [item], run.situation).length === 0) continue;
    if (run.sip.ended) return finish(run, 0);
    if (item.action.name !== 'play') return runProfile(run, dialplan, item, top);
    const leg = await answered(run);
    if (!leg) return { answer: null, status: run.sip.ended ? 0 : 488, recording: null };
    await play(run, leg, item.action.params.announcement);
  }
  return undefined;
}

/** Dialplan v2 `pin` (stepPin): onStart, the digits compared to the code, then onSuccess/onFail/onTimeout. */
export async function runPin(
  run: NumberRun,
  dialplan: CompiledDialplan,
  profile: CompiledProfile,
  top: number,
): Promise<CallOutcome> {
  const pin = compiledPin(profile);
  const leg = await answered(run);
  if (!pin || !leg) return { answer: null, status: run.sip.ended ? 0 : 488, recording: null };
  const input = new DtmfInput(leg);
  const started = await runItems(run, dialplan, profile.pin?.onStart ?? [], top);
  if (started) return started;
  let entered = '';
  for (;;) {
    const timeout = (pin.timeout ?? 0) > 0 ? pin.timeout : undefined;
    const event = await input.next(timeout);
    if (event === 'ended') return finish(run, 0);
    const step = stepPin(pin, entered, event === 'timeout' ? { timeout: true } : { digit: event });
    if (step.state === 'pending') {
      entered = step.entered;
      continue;
    }
    input.close();
    if ('nextProfile' in step.next) return runDialplan(run, dialplan, top + 1);
    return (await runItems(run, dialplan, step.next.actions, top)) ?? finish(run, 200);
  }
}

/**
 * The start of a cyclic action's round-robin, kept in the database per dialplan and action (all
 * nodes continue one round-robin). A failed update is logged and the call starts at the first
 * target: ringing matters more than the order.
 */
export async function cyclicStart(run: NumberRun, action: string, count: number): Promise<number> {
  // Only a v2 dialplan has cyclic actions, and it always names itself (answerNumber).
  if (run.dialplan === undefined) return 0;
  try {
    return await run.ctx.routing.cyclicStart(run.dialplan, action, count);
  } catch (error) {
    run.ctx.options.log.warn({ err: error, dialplan: run.dialplan }, 'round-robin position not kept');
    return 0;
  }
}
