/**
 * A call to a platform number (the caller's INVITE came through Kamailio) while it runs, and
 * what its steps share: answering with Zentrale's endpoint, playing, voicemail, ringing targets,
 * an IVR's redirect. The steps themselves (number-call.ts) use these.
 */
import type { CallSituation } from '../decisions/index.js';
import { type AudioSource, MixSource, PcmSource, recordingToWav, ringTone } from '../media/index.js';
import { MediaLeg } from '../media-leg.js';
import type { IncomingCall } from '../sip/index.js';
import { type BridgeOutcome, type BridgeTarget, bridge } from './bridge.js';
import type { Call, CallOutcome, Step } from './call.js';
import { DEFAULT_RING_SECONDS, type EngineContext, targetUri } from './context.js';
import type { FilterService, NumberAnswer } from './directory.js';
import type { TrackedLeg } from './record.js';
import { relay } from './relay.js';
import { adoptBridged } from './relayed-media.js';

/** Platform numbers an IVR may redirect through in one call (IVR -> number -> IVR ...). */
const MAX_REDIRECTS = 5;
/** Longest voicemail. */
export const MAX_VOICEMAIL_SECONDS = 120;

/** A number call while it runs: the Call, the caller's INVITE and what its steps share. */
export class NumberRun {
  /** What the caller hears while targets ring (dialplan ringtone, legacy announcement). */
  ringtone: { readonly announcement: string; readonly mix: boolean } | undefined;
  /** The v2 dialplan answering (its uuid keys cyclic ringing's round-robin). */
  dialplan: string | undefined;
  /** Platform numbers entered through redirects. */
  depth = 0;

  constructor(
    readonly ctx: EngineContext,
    readonly call: Call,
    /** The caller's INVITE. */
    readonly sip: IncomingCall,
    readonly situation: CallSituation,
    /** play_announcement_only of the number first answering. */
    readonly announcementOnly: boolean,
    /** The step of what a number answers with (number-call.ts: answerStep). */
    readonly answerStep: (run: NumberRun, answer: NumberAnswer) => Step,
  ) {}

  /** Whose number answers (changes when an IVR redirects to another platform number). */
  get owner(): string {
    return this.call.owner!;
  }

  get number(): string {
    return this.call.number!;
  }

  get from(): string {
    return this.call.from;
  }

  /** Zentrale's own leg, once Zentrale answered the call (announcement, IVR, pin). */
  get leg(): MediaLeg | undefined {
    return this.call.leg;
  }

  get answered(): number | null {
    return this.call.answered;
  }

  /** The caller's CDR (the parent of a call-reverse leg). */
  get record(): TrackedLeg | undefined {
    return this.call.record;
  }
}

/** Ends a number call: hangs up when Zentrale answered it, else rejects it with `status`. */
export function finish(run: NumberRun, status: number, recording: string | null = null): CallOutcome {
  if (run.leg) {
    void run.leg.hangup().catch(() => {});
    return { answer: run.answered, status: 200, recording };
  }
  run.sip.reject(status);
  return { answer: null, status: run.sip.ended === 'cancel' ? 0 : status, recording };
}

/** Answers the call with Zentrale's own media endpoint (once); undefined when that failed. */
export async function answered(run: NumberRun): Promise<MediaLeg | undefined> {
  if (run.leg) return run.leg;
  const leg = await MediaLeg.accept(run.sip, run.ctx.media);
  if (!leg) return undefined;
  try {
    await leg.answer();
  } catch {
    return undefined;
  }
  run.call.answeredWith(leg);
  return leg;
}

/** Plays the owner's announcement on the answered leg (nothing when it has no audio). */
export async function play(run: NumberRun, leg: MediaLeg, announcement: string | undefined): Promise<void> {
  const wav = announcement && (await run.ctx.routing.announcementWav(run.owner, announcement));
  if (wav && !run.sip.ended) await leg.endpoint.playPcm(run.ctx.pcm(wav));
}

/** The voicemail path (v2 `record`, legacy `record`): the announcement, then the message. */
export async function voicemail(run: NumberRun, announcement: string | undefined): Promise<CallOutcome> {
  const leg = await answered(run);
  if (!leg) return { answer: null, status: run.sip.ended ? 0 : 488, recording: null };
  await play(run, leg, announcement);
  // play_announcement_only: no message after the announcement.
  if (run.sip.ended || run.announcementOnly) return finish(run, 200);
  const recorder = leg.endpoint.record(MAX_VOICEMAIL_SECONDS);
  run.sip.onEnd(() => recorder.stop('stopped'));
  const heard = await recorder.done;
  await leg.hangup();
  const recording = await run.ctx.recorder.storeVoicemail({
    owner: run.owner,
    from: run.from,
    to: run.number,
    wav: recordingToWav(heard),
  });
  return { answer: run.answered, status: 200, recording };
}

/**
 * Rings targets: bridged through rtpengine while the call is unanswered, relayed by Zentrale's
 * endpoints once Zentrale answered it (relay.ts). With `keep`, a failure leaves the caller
 * waiting for a fallback; else the failure ends the call.
 */
export async function ring(
  run: NumberRun,
  groups: BridgeTarget[][],
  timeout: number,
  keep = false,
  cancel?: AbortSignal,
  clip?: string,
): Promise<BridgeOutcome> {
  // The targets see the caller, or the action's clip_number (dialplan v2).
  const shown = clip ?? run.from;
  const options = {
    groups,
    timeout,
    from: `sip:${shown}@${run.ctx.options.host}`,
    fromDisplay: shown,
    keepCallerOnFailure: keep,
  };
  if (run.ringtone && !run.sip.ended) await playRingtone(run, run.ringtone);
  if (!run.leg) {
    const bridged = await bridge(run.ctx.ua, run.ctx.options.rtpengine, run.ctx.options.clock, run.sip, {
      ...options,
      onConnected: adoptBridged(run.ctx, run.call),
    });
    // A target answered: the call is in progress (Zentrale's own answer says so by itself).
    if (bridged.answered !== null) run.call.setStatus('in-progress');
    return bridged;
  }
  const outcome = await relay(run.ctx.ua, run.ctx.media, run.ctx.options.clock, run.leg, {
    ...options,
    cancel,
  });
  if (outcome.status !== 200 && !keep) void run.leg.hangup().catch(() => {});
  return outcome;
}

/**
 * The dialplan's ringtone (spec: "played during connection"): Zentrale answers the call and
 * plays the announcement in a loop while the targets ring, over the ring tone with `mix`; the
 * relay replaces it once a target answers. Without audio the caller hears the ring tone alone.
 */
export async function playRingtone(
  run: NumberRun,
  ringtone: { announcement: string; mix: boolean },
): Promise<void> {
  const wav = await run.ctx.routing.announcementWav(run.owner, ringtone.announcement);
  const leg = await answered(run);
  if (!leg) return;
  let source: AudioSource = wav ? new PcmSource(run.ctx.pcm(wav), true) : ringTone();
  if (wav && ringtone.mix) source = new MixSource(source, ringTone());
  void leg.endpoint.play(source);
}

/** Rings and waits for the end of the connected call. */
export async function connect(
  run: NumberRun,
  groups: BridgeTarget[][],
  timeout: number,
  clip?: string,
): Promise<CallOutcome> {
  const outcome = await ring(run, groups, timeout, false, undefined, clip);
  await outcome.ended;
  if (run.leg) return { answer: run.answered, status: 200, recording: null };
  return { answer: outcome.answered, status: outcome.status, recording: null };
}

/** Waits like an unanswered ring: until `cancel`, the caller gives up or `seconds` pass (480). */
export function waitRinging(run: NumberRun, seconds: number, cancel: AbortSignal): Promise<BridgeOutcome> {
  return new Promise((resolve) => {
    const done = () => {
      run.call.clearTimer(timer);
      resolve({ status: run.sip.ended ? 0 : 480, answered: null, ended: Promise.resolve() });
    };
    const timer = run.call.setTimer(done, seconds * 1000);
    cancel.addEventListener('abort', done);
    run.sip.onEnd(done);
  });
}

/**
 * An IVR's (or the call API's) redirect: a platform number answers as it would be called (the
 * call moves to it and its answer is the call's next step), any other number rings through the
 * carrier after the owner's call filter for `service`.
 */
export async function redirect(
  run: NumberRun,
  phone: string,
  service: FilterService = 'ivr',
): Promise<CallOutcome | undefined> {
  const answer = await run.ctx.routing.numberAnswer(phone);
  if (answer && answer.kind !== 'disabled' && answer.owner && run.depth < MAX_REDIRECTS) {
    run.call.moveTo(answer.owner, phone);
    run.depth += 1;
    run.call.next(run.answerStep(run, answer));
    return undefined;
  }
  const uri = await targetUri(run.ctx, phone, run.owner, service);
  if (!uri) return finish(run, 480);
  return connect(run, [[{ uri }]], DEFAULT_RING_SECONDS);
}
