/**
 * The step a platform number answers a call with: a v2 dialplan (dialplan-step.ts), an IVR
 * (ivr-step.ts), the owner's legacy dialplan (legacy-step.ts) or the call API (api-wait.ts); an IVR's redirect to another
 * platform number queues that number's answer as the next step. The pure decisions
 * (decideDialplan, stepPin, walkIvr, decideLegacyDialplan) say what happens; what the steps
 * share is number-run.ts.
 */

import { compileDialplan } from '../decisions/index.js';
import { apiWaitStep } from './api-wait.js';
import type { CallOutcome, Step } from './call.js';
import { runDialplan } from './dialplan-step.js';
import type { NumberAnswer } from './directory.js';
import { runIvr } from './ivr-step.js';
import { runLegacy } from './legacy-step.js';
import { finish, type NumberRun } from './number-run.js';

/** The step of what a platform number answers with: its v2 dialplan, its IVR or its owner's legacy dialplan. */
export function answerStep(run: NumberRun, answer: NumberAnswer): Step {
  // The call API's step itself: the API finds it as the call's running step (api-wait.ts decide).
  if (answer.kind === 'api') return apiWaitStep(run);
  return { name: answer.kind, exec: () => answerNumber(run, answer), kill: () => {} };
}

function answerNumber(
  run: NumberRun,
  answer: Exclude<NumberAnswer, { kind: 'api' }>,
): Promise<CallOutcome | undefined> {
  switch (answer.kind) {
    case 'dialplan': {
      const ringtone = answer.dialplan.ringtone;
      if (ringtone?.announcement)
        run.ringtone = { announcement: ringtone.announcement, mix: ringtone.mix === true };
      run.dialplan = answer.uuid;
      return runDialplan(run, compileDialplan(answer.dialplan), 0);
    }
    case 'ivr':
      return runIvr(run, answer.ivr);
    case 'legacy':
      return runLegacy(run);
    case 'disabled':
      return Promise.resolve(finish(run, 480));
    case 'fax':
    case 'conference':
    case 'conference-offline':
      // Only a call to the fax or conference number itself is answered as a fax or a room
      // (incoming.ts); an IVR's or the call API's redirect to it finds it unavailable.
      return Promise.resolve(finish(run, 480));
  }
}
