/**
 * What a dialled string means (decisions.md "Dialling from a SIP account"): another account's
 * name, a number in E.164, a short number that the legacy dialplan's dial_prefix completes, or
 * a feature code (`*98`: the pending call-through). A pure decision, no I/O.
 */

export type Dialled =
  | { readonly kind: 'sip'; readonly username: string }
  | { readonly kind: 'number'; readonly number: string }
  /** Digits without `+` or `00` from a phone: dial_prefix completes them (completeShort). */
  | { readonly kind: 'short'; readonly digits: string }
  /** `*98`: connect the pending call-through (spec "Call-through"). */
  | { readonly kind: 'callthrough' }
  | { readonly kind: 'invalid' };

const SIPUSER = /^[a-z][a-z0-9]*_\d{2}$/i;

/** The feature code that starts the pending call-through from a SIP account. */
export const CALLTHROUGH_CODE = '*98';

/**
 * `bob_01` -> the SIP account; `+4930...` or `004930...` -> +4930...; a carrier delivers numbers
 * also without `+` (`4930...`). Separators a phone may keep (space, -, /, parentheses) are dropped.
 * From a phone, other digits (`0301234`, `1234`) are a short number for dial_prefix.
 */
export function parseDialled(user: string, fromCarrier = false): Dialled {
  let text: string;
  try {
    text = decodeURIComponent(user).trim();
  } catch {
    return { kind: 'invalid' };
  }
  if (SIPUSER.test(text)) return { kind: 'sip', username: text.toLowerCase() };
  if (!fromCarrier && text === CALLTHROUGH_CODE) return { kind: 'callthrough' };
  const digits = text.replace(/[\s\-/().]/g, '');
  if (/^\+\d{3,20}$/.test(digits)) return { kind: 'number', number: digits };
  if (/^00\d{3,20}$/.test(digits)) return { kind: 'number', number: `+${digits.slice(2)}` };
  if (fromCarrier && /^[1-9]\d{2,19}$/.test(digits)) return { kind: 'number', number: `+${digits}` };
  if (!fromCarrier && /^\d{1,20}$/.test(digits)) return { kind: 'short', digits };
  return { kind: 'invalid' };
}

/**
 * A short number with the dial_prefix prepended (`+4930` and `1234567` -> `+49301234567`), or
 * undefined without a prefix or when the result is no PHONE (more than 20 digits).
 */
export function completeShort(digits: string, dialPrefix: string | undefined): string | undefined {
  if (!dialPrefix) return undefined;
  const number = `${dialPrefix}${digits}`;
  return /^\+\d{3,20}$/.test(number) ? number : undefined;
}

/** The user part of a SIP URI (`sip:bob_01@example;x=y` -> `bob_01`); '' when none. */
export function uriUser(uri: string): string {
  const rest = uri.replace(/^<|>$/g, '').replace(/^sips?:/i, '');
  const at = rest.indexOf('@');
  return at < 0 ? '' : (rest.slice(0, at).split(';')[0] ?? '');
}
