/** A number's IVR as a call's step (walkIvr decides). */
import { type IvrEvent, walkIvr } from '../decisions/index.js';
import type { CallOutcome } from './call.js';
import { DtmfInput } from './dtmf-input.js';
import { answered, finish, type NumberRun, play, redirect } from './number-run.js';

/** Key presses and timeouts one IVR call reads at most before Zentrale hangs up. */
const MAX_IVR_EVENTS = 100;

/** The number's IVR (walkIvr decides): announcement, keys, other and timeout, nested IVRs, redirects. */
export async function runIvr(run: NumberRun, start: string): Promise<CallOutcome | undefined> {
  const ivrs = await run.ctx.routing.ivrs(run.owner);
  const leg = await answered(run);
  if (!leg) return { answer: null, status: run.sip.ended ? 0 : 488, recording: null };
  const input = new DtmfInput(leg);
  const events: IvrEvent[] = [];
  while (events.length < MAX_IVR_EVENTS) {
    const { outcome, trace } = walkIvr(ivrs, start, events);
    if (outcome.kind === 'missing-ivr') break;
    if (outcome.kind === 'play') {
      input.close();
      await play(run, leg, outcome.announcement);
      break;
    }
    if (outcome.kind === 'redirect') {
      input.close();
      return redirect(run, outcome.phone);
    }
    const ivr = ivrs.get(outcome.ivr)!;
    const step = trace[trace.length - 1]?.step;
    if ((step === 'announcement' || step === 'repeat') && !input.pending)
      await play(run, leg, ivr.announcement);
    const event = await input.next(ivr.timeout?.seconds);
    if (event === 'ended') break;
    events.push(event);
  }
  input.close();
  return finish(run, 200);
}
