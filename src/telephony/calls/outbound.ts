/**
 * Calls Zentrale places itself: a callback (POST /api/dialplan/callback) and a rule's call
 * action. Each is a Call of this node's registry, queued until its first INVITE leaves and
 * admitted against its owner's concurrent-call quota; a rule call's commands are its steps.
 */
import { pcmFromWav } from '../media/index.js';
import { MediaLeg } from '../media-leg.js';
import type { InviteResult } from '../sip/index.js';
import { Call, type CallOutcome, type CallStatus, finalStatus, type Step } from './call.js';
import {
  type CallerIdentity,
  type EngineContext,
  featureNumber,
  identityFor,
  outside,
  trackLeg,
} from './context.js';
import { parseDialled } from './dial.js';
import type { FilterService, OutgoingIdentity } from './directory.js';
import { relay } from './relay.js';
import { relaying } from './transfer.js';

/** How long a callback's legs ring before they are given up. */
const CALLBACK_RING_SECONDS = 60;

/** The rule action `call` (spec "Rules"), as the rule engine hands it over. */
export interface RuleCallAction {
  readonly from: string;
  readonly from_name?: string;
  readonly clip?: string;
  readonly recipients: readonly string[];
  readonly commands: readonly ({ silence: number } | { announcement: string } | { conference: string })[];
}

/** What a rule call does once its commands played (a conference command: joins the room). */
export type AfterCommands = (call: Call, leg: MediaLeg) => Promise<void>;

/** A queued outgoing call of `owner`, admitted and registered; undefined beyond the owner's bound. */
export async function placed(
  ctx: EngineContext,
  init: ConstructorParameters<typeof Call>[0],
): Promise<Call | undefined> {
  const call = new Call(init, ctx.options.clock);
  if (!(await ctx.admit(call))) {
    call.end('failed');
    return undefined;
  }
  ctx.calls.add(call);
  return call;
}

/** A call of the call API (service call, out) placed for `owner`, shown as `from` (none: anonymous). */
export function queuedApiCall(
  ctx: EngineContext,
  owner: string,
  from: string | undefined,
): Promise<Call | undefined> {
  return placed(ctx, {
    direction: 'out',
    service: 'call',
    owner,
    number: from,
    from: from ?? 'anonymous',
    status: 'queued',
  });
}

/** Originates `leg` for `call`, hung up when it rings longer than `ringSeconds`. */
export async function originated(
  call: Call,
  leg: MediaLeg & { result: Promise<InviteResult> },
  ringSeconds = CALLBACK_RING_SECONDS,
): Promise<boolean> {
  call.adopt(leg.call);
  call.setStatus('ringing');
  const timer = call.setTimer(() => void leg.hangup(), ringSeconds * 1000);
  const result = await leg.result;
  call.clearTimer(timer);
  if (result.status < 200 || result.status >= 300 || leg.call.ended) {
    call.setStatus(finalStatus(false, result.status));
    return false;
  }
  // Zentrale's endpoint is the call's media from here on: hold, resume and DTMF act on it.
  call.answeredWith(leg);
  return true;
}

/** Two legs Zentrale places for `owner`: `via` first, then, once it answered, `to`, bridged. */
export interface ViaThenTo {
  readonly owner: string;
  readonly service: 'call_back' | 'call';
  readonly filter: FilterService;
  /** The number shown on both legs (and the legs' CDR phone). */
  readonly from: string | undefined;
  readonly via: string;
  readonly to: string;
  /** Seconds each leg rings. */
  readonly ringSeconds: number;
  /** `via` and `to` may name SIP accounts too (click-to-dial); a callback's are numbers. */
  readonly accounts?: boolean;
}

/** A leg's target as dialled: a SIP account by name (when allowed), else a number, short ones completed. */
function legTarget(target: string, identity: OutgoingIdentity, accounts = false): string | undefined {
  return accounts && parseDialled(target).kind === 'sip' ? target : featureNumber(target, identity);
}

/**
 * Callback (POST /api/dialplan/callback): the user's cti_via is called first; once it
 * answered, `to` is called and both are bridged (relayed by Zentrale's endpoints). `from` is
 * the caller number on both legs; clir_enable withholds it on the `to` leg. Two CDRs:
 * the cti_via leg is the parent of the `to` leg. Resolves when the callback ended.
 */
export async function callback(ctx: EngineContext, user: string): Promise<void> {
  const request = await ctx.routing.takeCallback(user);
  if (!request) return;
  const call = await placed(ctx, {
    direction: 'out',
    service: 'call_back',
    owner: user,
    number: request.from,
    from: request.from,
    status: 'queued',
  });
  if (!call) {
    ctx.options.log.info({ user }, 'callback refused: concurrent call limit');
    return;
  }
  await viaThenTo(ctx, call, {
    owner: user,
    service: 'call_back',
    filter: 'callback',
    from: request.from,
    via: request.via,
    to: request.to,
    ringSeconds: CALLBACK_RING_SECONDS,
  });
}

/**
 * POST /api/call/dial (click-to-dial): a queued call of `owner`, admitted and registered before
 * its first INVITE leaves, so that the API can answer with it; it rings `via` (the user's own
 * phone), then `to`, as a callback does. Undefined beyond the owner's concurrent-call bound.
 */
export async function clickToDial(
  ctx: EngineContext,
  request: Omit<ViaThenTo, 'service' | 'filter'>,
): Promise<Call | undefined> {
  const call = await queuedApiCall(ctx, request.owner, request.from);
  if (!call) return undefined;
  void viaThenTo(ctx, call, { ...request, service: 'call', filter: 'call_api', accounts: true }).catch(
    (error: unknown) => ctx.options.log.error({ err: error, owner: request.owner }, 'click-to-dial failed'),
  );
  return call;
}

/** Runs the two legs of `request` as `call`, which ends with them. */
async function viaThenTo(ctx: EngineContext, call: Call, request: ViaThenTo): Promise<void> {
  const { owner: user, service, filter } = request;
  let status: CallStatus = 'failed';
  try {
    const identity = await ctx.routing.outgoingIdentity(user);
    const viaTarget = legTarget(request.via, identity, request.accounts);
    const via = viaTarget && (await outside(ctx, user, viaTarget, filter));
    const toNumber = legTarget(request.to, identity, request.accounts);
    const parent = trackLeg(ctx, {
      owner: user,
      service,
      direction: 'out',
      number: request.via,
      phone: request.from,
    });
    call.record = parent;
    if (!via || via === 'denied' || !toNumber) {
      await parent.end();
      return;
    }
    const asserted = (await ctx.routing.outgoingIdentity(user, request.from)).assertedIdentity;
    const viaLeg = await MediaLeg.originate(ctx.ua, ctx.media, {
      uri: via.uri,
      ...identityFor(ctx, request.from, false, asserted),
    });
    if (!(await originated(call, viaLeg, request.ringSeconds))) {
      status = call.status;
      await parent.end();
      return;
    }
    parent.answered();
    const to = await outside(ctx, user, toNumber, filter);
    const child = trackLeg(
      ctx,
      {
        owner: user,
        service,
        direction: 'out',
        number: to && to !== 'denied' ? to.number : toNumber,
        phone: request.from,
      },
      parent,
    );
    status = 'completed';
    if (!to || to === 'denied') {
      await viaLeg.hangup();
      await parent.end();
      await child.end();
      return;
    }
    const outcome = await relay(ctx.ua, ctx.media, ctx.options.clock, viaLeg, {
      groups: [[{ uri: to.uri }]],
      timeout: request.ringSeconds,
      ...identityFor(ctx, request.from, identity.clir, asserted),
      onPair: (pair) => relaying(call, pair),
    });
    if (outcome.status === 200) {
      child.answered();
      await outcome.ended;
    } else await viaLeg.hangup().catch(() => {});
    // Both end now (the child's CDR is still written after its parent's).
    await Promise.all([parent.end(), child.end()]);
  } finally {
    call.end(status);
  }
}

/**
 * A rule's call action (spec "Rules", action call): one call to each recipient, placed for the
 * rule's owner as `from` (the recipients see `clip` when given, and `from_name`), that plays the
 * commands once answered (the owner's announcements, silences in milliseconds) and hangs up, or,
 * after a conference command (`then`), joins that room and hangs up when it leaves it.
 * Each call is one of the owner's concurrent calls (a recipient beyond the bound is skipped)
 * and passes the partner's call filter as the call API's calls do (`call_api`): a Call of the
 * registry like a click-to-dial's, listed and followed by the call API. Resolves once every call was
 * placed; the calls run on, their CDRs (service call, direction out) tell how they went.
 */
export async function ruleCall(
  ctx: EngineContext,
  owner: string,
  action: RuleCallAction,
  then?: AfterCommands,
): Promise<void> {
  const shown = action.clip ?? action.from;
  const asserted = (await ctx.routing.outgoingIdentity(owner, shown)).assertedIdentity;
  const identity = identityFor(ctx, shown, false, asserted);
  for (const recipient of new Set(action.recipients)) {
    const target = await outside(ctx, owner, recipient, 'call_api');
    if (!target || target === 'denied') {
      ctx.options.log.info({ owner, recipient }, 'rule call not placed: no route or filtered');
      continue;
    }
    const call = await placed(ctx, {
      direction: 'out',
      service: 'call',
      owner,
      number: action.from,
      from: shown,
      status: 'queued',
    });
    if (!call) {
      ctx.options.log.info({ owner, recipient }, 'rule call not placed: concurrent call limit');
      continue;
    }
    call.record = trackLeg(ctx, {
      owner,
      service: 'call',
      direction: 'out',
      number: target.number,
      phone: action.from,
    });
    void playCommands(ctx, call, target.uri, identity, action, then)
      .catch((error: unknown) => ctx.options.log.error({ err: error, owner }, 'rule call failed'))
      .finally(() => call.end(call.status === 'in-progress' ? 'completed' : 'failed'));
  }
}

type PlayCommand = { silence: number } | { announcement: string };

/** One command of a rule call: an announcement of the owner, or a silence, on the answered leg. */
function commandStep(ctx: EngineContext, leg: MediaLeg, command: PlayCommand): Step {
  return {
    name: 'announcement' in command ? 'play' : 'silence',
    async exec(call): Promise<CallOutcome | undefined> {
      if (leg.call.ended) return { answer: call.answered, status: 200, recording: null };
      if ('announcement' in command) {
        const wav = await ctx.routing.announcementWav(call.owner!, command.announcement);
        if (wav && !leg.call.ended) await leg.endpoint.playPcm(pcmFromWav(wav));
      } else await leg.endpoint.playPcm(new Int16Array(Math.round(command.silence * 8)));
      return undefined;
    },
    kill: () => {},
  };
}

async function playCommands(
  ctx: EngineContext,
  call: Call,
  uri: string,
  identity: CallerIdentity,
  action: RuleCallAction,
  then: AfterCommands | undefined,
): Promise<void> {
  const record = call.record!;
  const leg = await MediaLeg.originate(ctx.ua, ctx.media, {
    uri,
    ...identity,
    ...(action.from_name ? { fromDisplay: action.from_name } : {}),
  });
  try {
    if (!(await originated(call, leg))) return;
    record.answered();
    const played = action.commands.filter((command): command is PlayCommand => !('conference' in command));
    call.push(...played.map((command) => commandStep(ctx, leg, command)));
    await call.run();
    if (then && !leg.call.ended) await then(call, leg);
    if (!leg.call.ended) await leg.hangup();
  } finally {
    await record.end();
  }
}
