/**
 * The legacy dialplan (spec "Legacy dialplan and call features", GET/POST /api/dialplan): its
 * stored shape, what it refers to, and which action and targets answer a call in each situation.
 *
 * Decisions where the spec is silent:
 * - First attempt: `reject` hangs up, `record` starts the mailbox; `none`, `redirect` and `sip`
 *   ring their target (phone or sip) together with the active phone_pool entries, the sip_pool
 *   and call-reverse when callreverse_enable is set ("additional targets like the pools"), for
 *   timeout.timeout seconds (absent: until the caller hangs up). Nothing to ring: the
 *   unavailable path answers at once.
 * - timeout uses the dialplan's phone and sip; unavailable and busy use their own phone and sip,
 *   else the dialplan's. A redirect or sip action without a target rejects the call.
 * - unavailable absent: reject; busy absent or `none`: the caller hears busy (action none).
 */

export type LegacyAction = 'none' | 'redirect' | 'reject' | 'sip' | 'record';

export interface LegacyFallback {
  action?: LegacyAction;
  phone?: string;
  sip?: string;
}

export interface LegacyDialplan {
  announcement?: string;
  mix_ringtone?: boolean;
  clip_number?: string;
  dial_prefix?: string;
  clir_enable?: boolean;
  cti_via?: string;
  action?: LegacyAction;
  phone?: string;
  sip?: string;
  phone_pool?: Record<string, boolean>;
  sip_pool?: string[];
  callreverse_enable?: boolean;
  timeout?: { timeout?: number; action?: LegacyAction };
  unavailable?: LegacyFallback;
  busy?: LegacyFallback;
}

export type LegacySituation = 'call' | 'timeout' | 'unavailable' | 'busy';

export type LegacyTarget = { phone: string } | { sip: string } | { callreverse: true };

export interface LegacyDecision {
  situation: LegacySituation;
  action: LegacyAction;
  /** what rings, in this order: the action's target, phone_pool, sip_pool, call-reverse */
  targets: LegacyTarget[];
  /** seconds to ring before the timeout path (only when ringing; absent: no limit) */
  ringTimeout?: number;
  /** the mailbox announcement, for record */
  announcement?: string;
  /** why the action differs from the configured one */
  reason?: string;
}

function ringTargets(dialplan: LegacyDialplan, own: LegacyTarget | null): LegacyTarget[] {
  const targets: LegacyTarget[] = own ? [own] : [];
  for (const [phone, active] of Object.entries(dialplan.phone_pool ?? {}))
    if (active) targets.push({ phone });
  for (const sip of dialplan.sip_pool ?? []) targets.push({ sip });
  if (dialplan.callreverse_enable) targets.push({ callreverse: true });
  return targets;
}

function actionWith(
  dialplan: LegacyDialplan,
  situation: LegacySituation,
  action: LegacyAction,
  phone: string | undefined,
  sip: string | undefined,
): LegacyDecision {
  switch (action) {
    case 'reject':
      return { situation, action, targets: [] };
    case 'record':
      return { situation, action, targets: [], announcement: dialplan.announcement };
    case 'none':
      return { situation, action, targets: [] };
    case 'redirect':
      if (!phone) return { situation, action: 'reject', targets: [], reason: 'redirect without phone' };
      return { situation, action, targets: [{ phone }] };
    case 'sip':
      if (!sip) return { situation, action: 'reject', targets: [], reason: 'sip without sip account' };
      return { situation, action, targets: [{ sip }] };
  }
}

/** Which action and targets answer a call to a number with this legacy dialplan, in `situation`. */
export function decideLegacyDialplan(dialplan: LegacyDialplan, situation: LegacySituation): LegacyDecision {
  if (situation === 'call') {
    const action = dialplan.action ?? 'none';
    if (action === 'reject' || action === 'record')
      return actionWith(dialplan, situation, action, undefined, undefined);
    const own = action === 'redirect' && dialplan.phone ? { phone: dialplan.phone } : null;
    const ownSip = action === 'sip' && dialplan.sip ? { sip: dialplan.sip } : null;
    const targets = ringTargets(dialplan, own ?? ownSip);
    if (targets.length === 0) {
      return { ...decideLegacyDialplan(dialplan, 'unavailable'), reason: 'nothing to ring' };
    }
    const ringTimeout = dialplan.timeout?.timeout;
    return ringTimeout === undefined
      ? { situation, action, targets }
      : { situation, action, targets, ringTimeout };
  }
  if (situation === 'timeout') {
    return actionWith(
      dialplan,
      situation,
      dialplan.timeout?.action ?? 'reject',
      dialplan.phone,
      dialplan.sip,
    );
  }
  const fallback = dialplan[situation];
  const defaultAction: LegacyAction = situation === 'busy' ? 'none' : 'reject';
  return actionWith(
    dialplan,
    situation,
    fallback?.action ?? defaultAction,
    fallback?.phone ?? dialplan.phone,
    fallback?.sip ?? dialplan.sip,
  );
}

/** What a legacy dialplan refers to, for the service's checks (wrong-announcement, wrong-sip). */
export function legacyDialplanReferences(dialplan: LegacyDialplan): {
  announcements: Set<string>;
  sips: Set<string>;
} {
  const announcements = new Set<string>();
  if (dialplan.announcement) announcements.add(dialplan.announcement);
  const sips = new Set<string>();
  for (const sip of [
    dialplan.sip,
    dialplan.unavailable?.sip,
    dialplan.busy?.sip,
    ...(dialplan.sip_pool ?? []),
  ]) {
    if (sip) sips.add(sip);
  }
  return { announcements, sips };
}

/** A POST /api/dialplan body as far as references go: pools are changes, "" deletes. */
export interface LegacyDialplanChange extends Omit<LegacyDialplan, 'phone_pool' | 'sip_pool'> {
  sip_pool?: { add?: string[]; delete?: string[] };
}

/**
 * What a POST /api/dialplan body newly refers to (wrong-announcement, wrong-sip): the
 * announcement and SIP accounts it sets or adds; deletions ("" and sip_pool.delete) need no check.
 */
export function legacyChangeReferences(change: LegacyDialplanChange): {
  announcements: Set<string>;
  sips: Set<string>;
} {
  return legacyDialplanReferences({ ...change, sip_pool: change.sip_pool?.add ?? [] });
}
