/**
 * What a dialled string means (decisions.md "Dialling from a SIP account"): another account's
 * name, or a number in E.164. A pure decision, no I/O.
 */

export type Dialled =
  | { readonly kind: 'sip'; readonly username: string }
  | { readonly kind: 'number'; readonly number: string }
  | { readonly kind: 'invalid' };

const SIPUSER = /^[a-z][a-z0-9]*_\d{2}$/i;

/**
 * `bob_01` -> the SIP account; `+4930...` or `004930...` -> +4930...; a carrier delivers numbers
 * also without `+` (`4930...`). Separators a phone may keep (space, -, /, parentheses) are dropped.
 * Short numbers (dial_prefix) are not completed yet: they are invalid.
 */
export function parseDialled(user: string, fromCarrier = false): Dialled {
  const text = decodeURIComponent(user).trim();
  if (SIPUSER.test(text)) return { kind: 'sip', username: text.toLowerCase() };
  const digits = text.replace(/[\s\-/().]/g, '');
  if (/^\+\d{3,20}$/.test(digits)) return { kind: 'number', number: digits };
  if (/^00\d{3,20}$/.test(digits)) return { kind: 'number', number: `+${digits.slice(2)}` };
  if (fromCarrier && /^[1-9]\d{2,19}$/.test(digits)) return { kind: 'number', number: `+${digits}` };
  return { kind: 'invalid' };
}

/** The user part of a SIP URI (`sip:bob_01@example;x=y` -> `bob_01`); '' when none. */
export function uriUser(uri: string): string {
  const rest = uri.replace(/^<|>$/g, '').replace(/^sips?:/i, '');
  const at = rest.indexOf('@');
  return at < 0 ? '' : (rest.slice(0, at).split(';')[0] ?? '');
}
