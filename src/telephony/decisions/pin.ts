/**
 * The pin action of dialplan v2 (spec "Dialplan v2", action pin): the caller enters DTMF
 * symbols; the check runs when as many symbols as the code has are entered. onSuccess runs on
 * success; onFail on a wrong code and onTimeout when the pin's timeout (seconds, 0 = never)
 * passes; a missing or empty array means the next profile's action starts (decided with
 * decideDialplan's `from`). Decision: an empty onSuccess falls back the same way.
 */
import type { CompiledProfile, PinParams } from './dialplan.js';

export type PinEvent = { digit: string } | { timeout: true };

export type PinOutcome = 'success' | 'fail' | 'timeout';

/** The action array that runs next: the pin's, or the next profile after the pin's own. */
export type PinNext<T> = { actions: T[] } | { nextProfile: true };

export type PinStep<T> =
  | { state: 'pending'; entered: string }
  | { state: PinOutcome; entered: string; next: PinNext<T> };

const DTMF = /^[0-9*#A-D]$/;

type PinArrays<T> = Pick<PinParams, 'code' | 'timeout'> & {
  onSuccess?: T[];
  onFail?: T[];
  onTimeout?: T[];
};

function nextOf<T>(actions: T[] | undefined): PinNext<T> {
  return actions && actions.length > 0 ? { actions } : { nextProfile: true };
}

/**
 * One step of the pin dialogue: `entered` is what the caller typed so far. Symbols that are not
 * DTMF are ignored; a timeout event is ignored when the pin has no timeout (0 or less).
 * Works on the pin as configured (PinParams) and on its compiled arrays alike.
 */
export function stepPin<T>(pin: PinArrays<T>, entered: string, event: PinEvent): PinStep<T> {
  if ('timeout' in event) {
    if ((pin.timeout ?? 0) < 1) return { state: 'pending', entered };
    return { state: 'timeout', entered, next: nextOf(pin.onTimeout) };
  }
  if (!DTMF.test(event.digit)) return { state: 'pending', entered };
  const now = entered + event.digit;
  if (now.length < pin.code.length) return { state: 'pending', entered: now };
  if (now === pin.code) return { state: 'success', entered: now, next: nextOf(pin.onSuccess) };
  return { state: 'fail', entered: now, next: nextOf(pin.onFail) };
}

/** The compiled arrays of a compiled pin profile, with the pin's code and timeout, for stepPin. */
export function compiledPin(profile: CompiledProfile): PinArrays<CompiledProfile> | null {
  if (profile.action.name !== 'pin' || !profile.pin) return null;
  const params = profile.action.params;
  return { code: params.code, timeout: params.timeout, ...profile.pin };
}
