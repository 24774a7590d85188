/**
 * What answers a call to a platform number (spec GET/POST /api/phone, "Legacy dialplan"): the v2
 * dialplan chosen for the number, else its IVR, else the user's legacy dialplan. Decision: a
 * number with both set (only possible through stored data from before a change) is answered by
 * the dialplan. A number whose partner switch dialplan_enable is off is answered by no dialplan:
 * it serves the partner's other switches (call API, fax, conference).
 */

export interface NumberSettings {
  dialplan_enable?: boolean;
  dialplan?: string | null;
  ivr?: string | null;
}

export type NumberRoute =
  | { kind: 'dialplan'; uuid: string }
  | { kind: 'ivr'; uuid: string }
  | { kind: 'legacy' }
  | { kind: 'disabled' };

export function routeNumber(settings: NumberSettings): NumberRoute {
  if (settings.dialplan_enable === false) return { kind: 'disabled' };
  if (settings.dialplan) return { kind: 'dialplan', uuid: settings.dialplan };
  if (settings.ivr) return { kind: 'ivr', uuid: settings.ivr };
  return { kind: 'legacy' };
}
