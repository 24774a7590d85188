/**
 * The media commands of a live call (issue 25, the call API's play, stop, mute, collect and
 * record; docs/decisions.md "Call control: media commands"): they act on Zentrale's media leg of
 * the call, the user's side of it (the caller of a call Zentrale answered, the user's own phone
 * of a click-to-dial call). A call rtpengine relays between two phones has no such leg: each
 * command is then illegal-state, as before the answer and once the call ends.
 */
import { type Muted, PcmSource, type PlayResult, type Recording, ToneSource } from '../media/index.js';
import type { MediaLeg } from '../media-leg.js';
import type { Call } from './call.js';
import { CallError } from './errors.js';

/** What a play plays: a tone (Hz, ms; no duration: until stopped) or 8 kHz samples. */
export type PlaySource =
  | { readonly tone: { readonly frequency: number; readonly duration?: number } }
  | { readonly pcm: Int16Array };

/** Why a collect of digits ended. */
export type CollectEnd = 'max-digits' | 'terminator' | 'timeout' | 'ended' | 'replaced';

export interface CollectOptions {
  readonly maxDigits: number;
  /** Seconds to wait for the first digit and for each next one. */
  readonly timeout: number;
  /** A key that ends the digits early (not among them). */
  readonly terminator?: string;
}

export interface Collected {
  readonly digits: string;
  readonly reason: CollectEnd;
}

/** Per call: the running collect and recording (one of each at a time) and what is muted. */
interface CallMedia {
  collect?: (reason: CollectEnd) => void;
  recording?: { stop(): void };
  muted: Muted;
  listening: boolean;
  onDigit?: (digit: string) => void;
}

const state = new WeakMap<Call, CallMedia>();

/** Zentrale's media leg of an answered, live call; otherwise the command does not fit (illegal-state). */
export function mediaLeg(call: Call): MediaLeg {
  const leg = call.leg;
  if (call.ended || call.status !== 'in-progress' || !leg || leg.call.ended || leg.endpoint.isClosed)
    throw new CallError('illegal-state', `Zentrale carries no media of call ${call.uuid}`);
  return leg;
}

function mediaOf(call: Call, leg: MediaLeg): CallMedia {
  let media = state.get(call);
  if (!media) {
    media = { muted: { send: false, receive: false }, listening: false };
    state.set(call, media);
  }
  if (!media.listening) {
    media.listening = true;
    const current = media;
    leg.onDtmf((event) => current.onDigit?.(event.digit));
  }
  return media;
}

/**
 * Plays to the user's side, replacing what played before (a relayed party is heard again after
 * it ends). Resolves when the play started; `ended` settles when it ends (done, stopped, closed).
 */
export function play(call: Call, source: PlaySource, loop: boolean): { ended: Promise<PlayResult> } {
  const leg = mediaLeg(call);
  if ('pcm' in source) return { ended: leg.endpoint.play(new PcmSource(source.pcm, loop)) };
  const { frequency, duration } = source.tone;
  // A looped tone of a duration repeats it with as long a pause: a beep every so often.
  const tone = new ToneSource(frequency, {
    amplitude: 0.25,
    ...(duration === undefined ? {} : loop ? { onMs: duration, offMs: duration } : { durationMs: duration }),
  });
  return { ended: leg.endpoint.play(tone) };
}

/** Ends what plays to the user's side (nothing playing: nothing changes). */
export function stopPlay(call: Call): void {
  mediaLeg(call).endpoint.stop();
}

/**
 * Mutes or unmutes the user's side: `in` what it hears (Zentrale sends silence), `out` what it
 * sends (its audio reaches neither the other party nor a recording; its keys still count).
 */
export function mute(call: Call, direction: 'in' | 'out' | 'both', muted: boolean): Muted {
  const leg = mediaLeg(call);
  const media = mediaOf(call, leg);
  media.muted = {
    send: direction === 'out' ? media.muted.send : muted,
    receive: direction === 'in' ? media.muted.receive : muted,
  };
  leg.endpoint.mute(media.muted);
  return media.muted;
}

/** What the user's side has muted (nothing before the first mute). */
export function mutedOf(call: Call): Muted {
  return state.get(call)?.muted ?? { send: false, receive: false };
}

/**
 * Collects keys the user's side presses (RFC 4733 or SIP INFO): up to `maxDigits`, ended early
 * by the terminator or when no key comes for `timeout` seconds. A new collect replaces a running
 * one (which ends `replaced`); the call's end ends it (`ended`). Resolves once the collect began
 * with the promise of its result.
 */
export function collect(call: Call, options: CollectOptions): { result: Promise<Collected> } {
  const leg = mediaLeg(call);
  const media = mediaOf(call, leg);
  media.collect?.('replaced');
  let digits = '';
  const result = new Promise<Collected>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (reason: CollectEnd) => {
      if (timer) call.clearTimer(timer);
      if (media.collect === finish) {
        media.collect = undefined;
        media.onDigit = undefined;
      }
      resolve({ digits, reason });
    };
    const wait = () => {
      if (timer) call.clearTimer(timer);
      timer = call.setTimer(() => finish('timeout'), options.timeout * 1000);
    };
    media.collect = finish;
    media.onDigit = (digit) => {
      if (digit === options.terminator) return finish('terminator');
      digits += digit;
      if (digits.length >= options.maxDigits) return finish('max-digits');
      wait();
    };
    call.onCleanup(() => finish('ended'));
    wait();
  });
  return { result };
}

/**
 * Records what the user's side sends, up to `maxSeconds`; one recording at a time per call
 * (another is illegal-state). `done` settles with the audio once it stops: `stopRecording`,
 * the maximum length, or the call's end.
 */
export function record(call: Call, maxSeconds: number): { done: Promise<Recording> } {
  const leg = mediaLeg(call);
  const media = mediaOf(call, leg);
  if (media.recording) throw new CallError('illegal-state', `call ${call.uuid} is being recorded`);
  const recorder = leg.endpoint.record(maxSeconds);
  const handle = { stop: () => recorder.stop('stopped') };
  media.recording = handle;
  call.onCleanup(() => recorder.stop('closed'));
  const done = recorder.done.finally(() => {
    if (media.recording === handle) media.recording = undefined;
  });
  return { done };
}

/** Stops the call's recording (its audio goes where `record`'s `done` takes it); none: illegal-state. */
export function stopRecording(call: Call): void {
  const recording = state.get(call)?.recording;
  if (!recording) throw new CallError('illegal-state', `call ${call.uuid} is not being recorded`);
  recording.stop();
}
