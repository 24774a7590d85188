/**
 * A call to a number whose only true switch is call_enable (spec "Partner API" phone settings:
 * "the call API works only if call_enable is the only true switch"; docs/decisions.md "The call
 * API"): it rings nowhere by itself. Its call_update (ringing) reaches the owner's subscribed
 * sessions and the partner stream, and the step waits, bounded, for the API to answer it,
 * reject it with a cause, or redirect it to a SIP account, a number, an IVR or a dialplan of the
 * owner, each as the number's own answer would (number-call.ts, number-run.ts).
 */
import type { Call, CallOutcome, Step } from './call.js';
import { DEFAULT_RING_SECONDS } from './context.js';
import { CallError } from './errors.js';
import { connect, finish, type NumberRun, redirect, answered as withMedia } from './number-run.js';

/** Seconds a call waits for the API when the engine's options say nothing (CALL_API_WAIT). */
export const API_WAIT_SECONDS = 30;

/** The SIP status each reject cause sends the caller. */
export const REJECT_STATUS = { busy: 486, decline: 603, unavailable: 480 } as const;
export type RejectCause = keyof typeof REJECT_STATUS;

/** Where a redirect hands the call: one of these, each the owner's (a number: any, as dialled). */
export type RedirectTarget =
  | { readonly sip: string }
  | { readonly phone: string }
  | { readonly ivr: string }
  | { readonly dialplan: string };

export type ApiDecision =
  | { readonly command: 'answer' }
  | { readonly command: 'reject'; readonly cause: RejectCause }
  | { readonly command: 'redirect'; readonly target: RedirectTarget };

/** A redirect target the owner does not have: which kind, so the API names it (wrong-sip, ...). */
export class RedirectTargetError extends Error {
  constructor(readonly kind: 'sip' | 'ivr' | 'dialplan') {
    super(`no ${kind} of the call's owner`);
    this.name = 'RedirectTargetError';
  }
}

/** What the API decided, with how the step tells it the decision was carried out. */
interface Pending {
  readonly decision: ApiDecision;
  /** The next step, checked before it is accepted (a redirect to an IVR or a dialplan). */
  readonly next?: Step;
  readonly done: (error?: Error) => void;
}

class ApiWait implements Step {
  readonly name = 'api';
  /** While true, the API may decide (once). */
  #open = false;
  #resolve: ((pending: Pending | undefined) => void) | undefined;
  #stopTimer: (() => void) | undefined;

  constructor(private readonly run: NumberRun) {}

  async exec(call: Call): Promise<CallOutcome | undefined> {
    const run = this.run;
    // Nobody could act on it: refused at once rather than left to ring out.
    if (!(await run.ctx.routing.callApiListening(run.owner))) return finish(run, 480);
    if (run.sip.ended) return finish(run, 480);
    run.sip.progress(180);
    const pending = await new Promise<Pending | undefined>((resolve) => {
      this.#resolve = resolve;
      this.#open = true;
      const timer = call.setTimer(() => resolve(undefined), this.seconds * 1000);
      run.sip.onEnd(() => resolve(undefined));
      this.#stopTimer = () => call.clearTimer(timer);
    });
    this.#stopTimer?.();
    this.#open = false;
    this.#resolve = undefined;
    // No decision in time, or the caller gave up: no-answer (480), or canceled.
    if (!pending) return finish(run, 480);
    return this.carryOut(pending);
  }

  private get seconds(): number {
    return this.run.ctx.options.apiWaitSeconds ?? API_WAIT_SECONDS;
  }

  private async carryOut({ decision, next, done }: Pending): Promise<CallOutcome | undefined> {
    const run = this.run;
    switch (decision.command) {
      case 'answer': {
        const leg = await withMedia(run);
        if (!leg) {
          done(new CallError('fail', 'the caller could not be answered'));
          return { answer: null, status: run.sip.ended ? 0 : 488, recording: null };
        }
        done();
        // Zentrale carries the call now: the API's other commands act on its leg until it ends.
        await new Promise((resolve) => run.sip.onEnd(resolve));
        return { answer: run.answered, status: 200, recording: null };
      }
      case 'reject':
        done();
        return finish(run, REJECT_STATUS[decision.cause]);
      case 'redirect': {
        done();
        const target = decision.target;
        if ('sip' in target) {
          const account = (await run.ctx.routing.sipAccount(target.sip))!;
          return connect(run, [[{ uri: `sip:${account.username}@${account.domain}` }]], DEFAULT_RING_SECONDS);
        }
        if ('phone' in target) return redirect(run, target.phone, 'call_api');
        // An IVR or a dialplan answers next, as it would answer a number set to it.
        run.call.next(next!);
        return undefined;
      }
    }
  }

  /** Takes the API's decision (once); resolves once it is carried out far enough to answer. */
  async decide(decision: ApiDecision): Promise<void> {
    if (!this.#open) throw new CallError('illegal-state', 'the call is not waiting for the API');
    // Taken now: a second decision arriving while this one is checked is illegal-state.
    this.#open = false;
    let next: Step | undefined;
    try {
      next = await this.check(decision);
    } catch (error) {
      this.#open = this.#resolve !== undefined;
      throw error;
    }
    const resolve = this.#resolve;
    if (!resolve) throw new CallError('illegal-state', 'the call ended');
    await new Promise<void>((settled, failed) => {
      resolve({ decision, next, done: (error) => (error ? failed(error) : settled()) });
    });
  }

  /** A redirect's target is the owner's (a number is any): the step that answers with it. */
  private async check(decision: ApiDecision): Promise<Step | undefined> {
    if (decision.command !== 'redirect') return undefined;
    const { ctx, owner } = this.run;
    const target = decision.target;
    if ('sip' in target) {
      if ((await ctx.routing.sipAccount(target.sip))?.owner !== owner) throw new RedirectTargetError('sip');
      return undefined;
    }
    if ('ivr' in target) {
      if (!(await ctx.routing.ivrs(owner)).has(target.ivr)) throw new RedirectTargetError('ivr');
      return this.run.answerStep(this.run, { kind: 'ivr', owner, ivr: target.ivr });
    }
    if ('dialplan' in target) {
      const dialplan = await ctx.routing.dialplan(owner, target.dialplan);
      if (!dialplan) throw new RedirectTargetError('dialplan');
      return this.run.answerStep(this.run, { kind: 'dialplan', owner, uuid: target.dialplan, dialplan });
    }
    return undefined;
  }

  kill(): void {
    this.#resolve?.(undefined);
  }
}

/** The step of a number answered by the call API. */
export function apiWaitStep(run: NumberRun): Step {
  return new ApiWait(run);
}

/**
 * The API's answer, reject or redirect for `call`: illegal-state (CallError) unless the call
 * waits for the API now; a RedirectTargetError for a target the owner does not have.
 */
export function decide(call: Call, decision: ApiDecision): Promise<void> {
  const step = call.step;
  if (!(step instanceof ApiWait) || call.ended)
    return Promise.reject(new CallError('illegal-state', `call ${call.uuid} is not waiting for the API`));
  return step.decide(decision);
}
