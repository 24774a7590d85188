/**
 * The media commands of a live call (the spec's /api/call family: POST /api/call/{uuid}/control's
 * play, stop, mute, collect and record; docs/decisions.md "Call control: media commands"): they
 * act on Zentrale's media leg of the call, the user's side of it (the caller of a call Zentrale
 * answered, the user's own phone of a click-to-dial call). On a call rtpengine relays between two
 * phones, play, stop, mute, collect and record act on the caller through rtpengine
 * (relayed-media.ts). Every command is illegal-state before the answer and once the call ends.
 */
import { type Muted, PcmSource, type Recording, type RecordingHandle, ToneSource } from '../media/index.js';
import { FRAME_SAMPLES, SAMPLE_RATE } from '../media/sources.js';
import type { MediaLeg } from '../media-leg.js';
import type { Call } from './call.js';
import { CallError } from './errors.js';
import { RelayedMedia, relayedMedia } from './relayed-media.js';

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

function mediaState(call: Call): CallMedia {
  let media = state.get(call);
  if (!media) {
    media = { muted: { send: false, receive: false }, listening: false };
    state.set(call, media);
  }
  return media;
}

/** The call's media state, told of the keys of the user's side (Zentrale's leg, or rtpengine's log). */
function mediaOf(call: Call, keys: MediaLeg | RelayedMedia): CallMedia {
  const media = mediaState(call);
  if (!media.listening) {
    media.listening = true;
    const current = media;
    keys.onDtmf((event) => current.onDigit?.(event.digit));
  }
  return media;
}

/** Where a play, stop, mute or collect goes: Zentrale's media leg, or rtpengine's relay; else illegal-state. */
export function playable(call: Call): MediaLeg | RelayedMedia {
  const relayed = call.leg ? undefined : relayedMedia(call);
  if (relayed && !call.ended && call.status === 'in-progress') return relayed;
  return mediaLeg(call);
}

/**
 * Plays to the user's side, replacing what played before (a relayed party is heard again after
 * it ends). Resolves when the play started.
 */
export async function play(call: Call, source: PlaySource, loop: boolean): Promise<void> {
  const target = playable(call);
  // A tone without a duration plays until stopped: its one second repeats.
  const endless = loop || ('tone' in source && source.tone.duration === undefined);
  if (target instanceof RelayedMedia) return target.play(pcmOf(source, loop), endless);
  if ('pcm' in source) {
    void target.endpoint.play(new PcmSource(source.pcm, loop));
    return;
  }
  void target.endpoint.play(toneOf(source.tone, loop));
}

function toneOf(tone: { readonly frequency: number; readonly duration?: number }, loop: boolean): ToneSource {
  const { frequency, duration } = tone;
  // A looped tone of a duration repeats it with as long a pause: a beep every so often.
  return new ToneSource(frequency, {
    amplitude: 0.25,
    ...(duration === undefined ? {} : loop ? { onMs: duration, offMs: duration } : { durationMs: duration }),
  });
}

/**
 * The samples rtpengine plays for a source: a tone without a duration is one second, looped
 * (whole periods, as the frequency is whole Hz); a looped tone of a duration is it and its pause.
 */
function pcmOf(source: PlaySource, loop: boolean): Int16Array {
  if ('pcm' in source) return source.pcm;
  const { duration } = source.tone;
  const ms = duration === undefined ? 1000 : loop ? 2 * duration : duration;
  const samples = new Int16Array(Math.round((ms * SAMPLE_RATE) / 1000 / FRAME_SAMPLES) * FRAME_SAMPLES);
  const tone = toneOf(source.tone, loop);
  for (let at = 0; at < samples.length; at += FRAME_SAMPLES)
    tone.read(samples.subarray(at, at + FRAME_SAMPLES));
  return samples;
}

/** Ends what plays to the user's side (nothing playing: nothing changes). */
export async function stopPlay(call: Call): Promise<void> {
  const target = playable(call);
  if (target instanceof RelayedMedia) return target.stop();
  target.endpoint.stop();
}

/**
 * Mutes or unmutes the user's side: `in` what it hears (Zentrale sends silence), `out` what it
 * sends (its audio reaches neither the other party nor a recording; its keys still count).
 */
export async function mute(call: Call, direction: 'in' | 'out' | 'both', muted: boolean): Promise<Muted> {
  const target = playable(call);
  const before = mutedOf(call);
  const after = {
    send: direction === 'out' ? before.send : muted,
    receive: direction === 'in' ? before.receive : muted,
  };
  if (target instanceof RelayedMedia) await target.mute(after);
  else target.endpoint.mute(after);
  mediaState(call).muted = after;
  return after;
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
  const media = mediaOf(call, playable(call));
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
 * the maximum length, or the call's end. On a call rtpengine relays, rtpengine sends a copy of
 * the caller's stream to an endpoint of Zentrale that records it (relayed-media.ts).
 */
export async function record(call: Call, maxSeconds: number): Promise<{ done: Promise<Recording> }> {
  const target = playable(call);
  const media = mediaOf(call, target);
  if (media.recording) throw new CallError('illegal-state', `call ${call.uuid} is being recorded`);
  // Taken before the first await: a second record-start meanwhile is refused, not a second copy.
  let stopped: Recording['reason'] | undefined;
  let recorder: RecordingHandle | undefined;
  const handle = {
    stop: (reason: Recording['reason'] = 'stopped') => {
      stopped ??= reason;
      recorder?.stop(reason);
    },
  };
  media.recording = handle;
  call.onCleanup(() => handle.stop('closed'));
  try {
    recorder =
      target instanceof RelayedMedia ? await target.record(maxSeconds) : target.endpoint.record(maxSeconds);
  } catch (error) {
    media.recording = undefined;
    throw error;
  }
  if (stopped) recorder.stop(stopped);
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
