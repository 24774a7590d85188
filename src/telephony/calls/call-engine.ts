/**
 * The call model (STYLE.md: src/telephony/calls/): Zentrale's SIP user agent on SIP_APP_PORT
 * behind Kamailio takes every call a phone or the carrier places and runs it step by step: a
 * SIP account calls another by name, a platform number answers with its v2 dialplan (reject, play,
 * record, parallel/linear/cyclic ringing, pin), its IVR or its owner's legacy dialplan, other
 * numbers go to CARRIER_URI. The pure decisions (decideDialplan, stepPin, walkIvr,
 * decideLegacyDialplan) say what happens; this file carries it out. What it needs of the
 * API areas it asks through the CallDirectory; it reports finished calls through recordCall.
 */
import type { FastifyBaseLogger } from 'fastify';
import { decideCallFilter } from '../decisions/callfilter.js';
import {
  type CallSituation,
  type CompiledDialplan,
  type CompiledProfile,
  compileDialplan,
  compiledPin,
  decideDialplan,
  decideLegacyDialplan,
  type IvrEvent,
  type LegacyTarget,
  orderTargets,
  selectActions,
  stepPin,
  walkIvr,
} from '../decisions/index.js';
import { MediaEngine, pcmFromWav, recordingToWav } from '../media/index.js';
import { MediaLeg } from '../media-leg.js';
import type { NgClient } from '../rtpengine/ng-client.js';
import { type IncomingCall, type Remote, SipUserAgent } from '../sip/index.js';
import { parseNameAddr } from '../sip/message.js';
import { type BridgeOutcome, type BridgeTarget, bridge } from './bridge.js';
import { parseDialled, uriUser } from './dial.js';
import type { CallDirectory, CallRecord, NumberAnswer, SipAccountInfo } from './directory.js';
import { DtmfInput } from './dtmf-input.js';
import { relay } from './relay.js';

export interface CallEngineOptions {
  /** Where the UA listens (SIP_HOST) and its port (SIP_APP_PORT). */
  readonly host: string;
  readonly port: number;
  /** Kamailio. */
  readonly proxy: Remote;
  readonly rtpengine: NgClient;
  /** CARRIER_URI; unset: calls to numbers outside are refused with 403. */
  readonly carrierUri: string | undefined;
  readonly log: FastifyBaseLogger;
  /** RTP ports of Zentrale's own media endpoints (announcements, voicemail). */
  readonly mediaPorts?: { readonly min: number; readonly max: number };
}

export interface NotifyRequest {
  readonly event: string;
  readonly contentType?: string;
  readonly content?: string;
}

/** Seconds a target rings when its dialplan says nothing (spec: targets' timeout default). */
const DEFAULT_RING_SECONDS = 20;
/** How long targets ring when nothing says (legacy dialplan without timeout, redirects). */
const MAX_RING_SECONDS = 180;
/** Key presses and timeouts one IVR call reads at most before Zentrale hangs up. */
const MAX_IVR_EVENTS = 100;
/** Platform numbers an IVR may redirect through in one call (IVR -> number -> IVR ...). */
const MAX_REDIRECTS = 5;
/** Longest voicemail. */
export const MAX_VOICEMAIL_SECONDS = 120;

type Outcome = Pick<CallRecord, 'answer' | 'status' | 'recording'>;

/** A call to a platform number while it runs. */
interface NumberCall {
  readonly call: IncomingCall;
  /** Whose number answers (changes when an IVR redirects to another platform number). */
  readonly owner: string;
  readonly number: string;
  readonly from: string;
  readonly situation: CallSituation;
  /** Zentrale's own leg, once Zentrale answered the call (announcement, IVR, pin). */
  leg?: MediaLeg;
  answered: number | null;
  /** Platform numbers entered through redirects. */
  readonly depth: number;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The caller id a number owner's dialplan matches against: a number, or the account name. */
function callerId(account: SipAccountInfo | undefined, call: IncomingCall): string | null {
  if (account) return account.callerId ?? account.username;
  const user = uriUser(parseNameAddr(call.from)?.uri ?? '');
  return user === '' || /^anonymous$/i.test(user) ? null : user;
}

export class CallEngine {
  /** Calls in progress per user (the concurrency bound of feature packs). */
  private readonly active = new Map<string, number>();
  /** Calls in progress per platform number called (GET /api/partner/user/{uuid}/calls). */
  private readonly activeByNumber = new Map<string, number>();

  private constructor(
    private readonly ua: SipUserAgent,
    private readonly media: MediaEngine,
    private readonly directory: CallDirectory,
    private readonly options: CallEngineOptions,
  ) {
    ua.onInvite((call) => {
      this.handle(call).catch((error: unknown) => {
        options.log.error({ err: error, callId: call.callId }, 'call failed');
        call.reject(500);
      });
    });
  }

  static async start(directory: CallDirectory, options: CallEngineOptions): Promise<CallEngine> {
    const ua = await SipUserAgent.start({
      host: options.host,
      port: options.port,
      outboundProxy: options.proxy,
      userAgent: 'Zentrale',
    });
    const media = new MediaEngine({
      address: options.host,
      portMin: options.mediaPorts?.min,
      portMax: options.mediaPorts?.max,
    });
    return new CallEngine(ua, media, directory, options);
  }

  /** Calls in progress (legs of this node's UA). */
  get callCount(): number {
    return this.ua.callCount;
  }

  /**
   * An out-of-dialog NOTIFY to the account's registered phones through Kamailio's location
   * lookup (POST /api/sip/{user}/notify). Resolves with the SIP status (480: not registered).
   */
  async notify(sipUser: string, request: NotifyRequest): Promise<number> {
    const account = await this.directory.sipAccount(sipUser);
    if (!account) return 404;
    const response = await this.ua.notify({
      uri: `sip:${account.username}@${account.domain}`,
      event: request.event,
      contentType: request.contentType,
      body: request.content,
    });
    return response.status;
  }

  async close(): Promise<void> {
    await this.ua.close();
    this.media.close();
  }

  private async handle(call: IncomingCall): Promise<void> {
    const { proxy } = this.options;
    // Only Kamailio speaks to this port: it authenticated the phone or marked the carrier.
    if (call.remote.address !== proxy.address || call.remote.port !== proxy.port) {
      call.reject(403);
      return;
    }
    const accountName = call.request.headers.get('x-zentrale-account');
    const fromCarrier = call.request.headers.get('x-zentrale-source') === 'carrier';
    const account = accountName ? await this.directory.sipAccount(accountName) : undefined;
    if (!account && !fromCarrier) {
      call.reject(403);
      return;
    }
    const dialled = parseDialled(uriUser(call.request.uri), fromCarrier);
    const start = nowSeconds();
    const record = (partial: Omit<CallRecord, 'callId' | 'start' | 'end'>) => {
      void this.directory
        .recordCall({ callId: call.callId, start, end: nowSeconds(), ...partial })
        .catch((error: unknown) => this.options.log.error({ err: error }, 'recordCall failed'));
    };
    const from = callerId(account, call) ?? 'anonymous';

    if (dialled.kind === 'invalid') {
      call.reject(404);
      return;
    }
    // Spec "Partner API" call filters: evaluated on every outgoing call of a SIP account; a
    // denied call is refused with 403 (replacements change what the filter matches, not the route).
    if (account) {
      const filter = await this.directory.callFilter(account.owner);
      const destination = dialled.kind === 'sip' ? dialled.username : dialled.number;
      if (filter && !decideCallFilter(filter, destination, 'sip').allowed) {
        call.reject(403);
        return;
      }
    }
    if (dialled.kind === 'sip') {
      if (!account) {
        call.reject(403);
        return;
      }
      const callee = await this.directory.sipAccount(dialled.username);
      if (!callee) {
        call.reject(404);
        return;
      }
      await this.counted(account.owner, call, async () => {
        const outcome = await bridge(this.ua, this.options.rtpengine, call, {
          groups: [[{ uri: `sip:${callee.username}@${callee.domain}` }]],
          timeout: 180,
          from: `sip:${account.username}@${account.domain}`,
          fromDisplay: account.username,
        });
        await outcome.ended;
        record({
          user: account.owner,
          from,
          to: callee.username,
          kind: 'sip',
          answer: outcome.answered,
          status: outcome.status,
          recording: null,
        });
      });
      return;
    }

    const answer = await this.directory.numberAnswer(dialled.number);
    if (!answer) {
      // Not a platform number: the carrier, for SIP accounts only.
      if (!account || !this.options.carrierUri) {
        call.reject(403);
        return;
      }
      const carrier = this.options.carrierUri;
      await this.counted(account.owner, call, async () => {
        const outcome = await bridge(this.ua, this.options.rtpengine, call, {
          groups: [[{ uri: carrierTarget(carrier, dialled.number) }]],
          timeout: 180,
          from: `sip:${account.callerId ?? account.username}@${account.domain}`,
        });
        await outcome.ended;
        record({
          user: account.owner,
          from,
          to: dialled.number,
          kind: 'carrier',
          answer: outcome.answered,
          status: outcome.status,
          recording: null,
        });
      });
      return;
    }
    if (answer.kind === 'disabled' || !answer.owner) {
      call.reject(480);
      return;
    }
    const owner = answer.owner;
    const number = dialled.number;
    this.activeByNumber.set(number, (this.activeByNumber.get(number) ?? 0) + 1);
    try {
      await this.counted(owner, call, async () => {
        const run: NumberCall = {
          call,
          owner,
          number,
          from,
          situation: { caller: callerId(account, call), instant: Date.now() },
          answered: null,
          depth: 0,
        };
        const result = await this.answerNumber(run, answer);
        record({ user: owner, from, to: number, kind: 'number', ...result });
      });
    } finally {
      const left = (this.activeByNumber.get(number) ?? 1) - 1;
      if (left > 0) this.activeByNumber.set(number, left);
      else this.activeByNumber.delete(number);
    }
  }

  /** Calls in progress to a platform number on this node's call engine (read-only). */
  activeCalls(number: string): number {
    return this.activeByNumber.get(number) ?? 0;
  }

  /** Runs what a platform number answers with: its v2 dialplan, its IVR or its owner's legacy dialplan. */
  private answerNumber(run: NumberCall, answer: NumberAnswer): Promise<Outcome> {
    switch (answer.kind) {
      case 'dialplan':
        return this.runDialplan(run, compileDialplan(answer.dialplan), 0);
      case 'ivr':
        return this.runIvr(run, answer.ivr);
      case 'legacy':
        return this.runLegacy(run);
      case 'disabled':
        return Promise.resolve(this.finish(run, 480));
    }
  }

  /** Runs `body` as one of the user's calls; beyond the user's bound the call gets 486. */
  private async counted(user: string, call: IncomingCall, body: () => Promise<void>): Promise<void> {
    const limit = await this.directory.callLimit(user);
    const current = this.active.get(user) ?? 0;
    if (current >= limit) {
      call.reject(486);
      return;
    }
    this.active.set(user, current + 1);
    try {
      await body();
    } finally {
      const left = (this.active.get(user) ?? 1) - 1;
      if (left > 0) this.active.set(user, left);
      else this.active.delete(user);
    }
  }

  /** Ends a number call: hangs up when Zentrale answered it, else rejects it with `status`. */
  private finish(run: NumberCall, status: number, recording: string | null = null): Outcome {
    if (run.leg) {
      void run.leg.hangup().catch(() => {});
      return { answer: run.answered, status: 200, recording };
    }
    run.call.reject(status);
    return { answer: null, status: run.call.ended === 'cancel' ? 0 : status, recording };
  }

  /** Answers the call with Zentrale's own media endpoint (once); undefined when that failed. */
  private async answered(run: NumberCall): Promise<MediaLeg | undefined> {
    if (run.leg) return run.leg;
    const leg = await MediaLeg.accept(run.call, this.media);
    if (!leg) return undefined;
    try {
      await leg.answer();
    } catch {
      return undefined;
    }
    run.leg = leg;
    run.answered = nowSeconds();
    return leg;
  }

  /** Plays the owner's announcement on the answered leg (nothing when it has no audio). */
  private async play(run: NumberCall, leg: MediaLeg, announcement: string | undefined): Promise<void> {
    const wav = announcement && (await this.directory.announcementWav(run.owner, announcement));
    if (wav && !run.call.ended) await leg.endpoint.playPcm(pcmFromWav(wav));
  }

  /** The voicemail path (v2 `record`, legacy `record`): the announcement, then the message. */
  private async voicemail(run: NumberCall, announcement: string | undefined): Promise<Outcome> {
    const leg = await this.answered(run);
    if (!leg) return { answer: null, status: run.call.ended ? 0 : 488, recording: null };
    await this.play(run, leg, announcement);
    if (run.call.ended) return this.finish(run, 200);
    const recorder = leg.endpoint.record(MAX_VOICEMAIL_SECONDS);
    run.call.onEnd(() => recorder.stop('stopped'));
    const heard = await recorder.done;
    await leg.hangup();
    const recording = await this.directory.storeVoicemail({
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
  private async ring(
    run: NumberCall,
    groups: BridgeTarget[][],
    timeout: number,
    keep = false,
  ): Promise<BridgeOutcome> {
    const options = {
      groups,
      timeout,
      from: `sip:${run.from}@${this.options.host}`,
      fromDisplay: run.from,
      keepCallerOnFailure: keep,
    };
    if (!run.leg) return bridge(this.ua, this.options.rtpengine, run.call, options);
    const outcome = await relay(this.ua, this.media, run.leg, options);
    if (outcome.status !== 200 && !keep) void run.leg.hangup().catch(() => {});
    return outcome;
  }

  /** Rings and waits for the end of the connected call. */
  private async connect(run: NumberCall, groups: BridgeTarget[][], timeout: number): Promise<Outcome> {
    const outcome = await this.ring(run, groups, timeout);
    await outcome.ended;
    if (run.leg) return { answer: run.answered, status: 200, recording: null };
    return { answer: outcome.answered, status: outcome.status, recording: null };
  }

  /** The v2 dialplan from profile `from` on. */
  private runDialplan(run: NumberCall, dialplan: CompiledDialplan, from: number): Promise<Outcome> {
    const decision = decideDialplan(dialplan, run.situation, { from });
    const profile = decision.profile === null ? undefined : dialplan.profiles[decision.profile];
    if (!profile) return Promise.resolve(this.finish(run, 480));
    return this.runProfile(run, dialplan, profile, profile.index);
  }

  /** One dialplan action; `top` is the index of the profile it belongs to (for a pin's fallback). */
  private async runProfile(
    run: NumberCall,
    dialplan: CompiledDialplan,
    profile: CompiledProfile,
    top: number,
  ): Promise<Outcome> {
    const action = profile.action;
    switch (action.name) {
      case 'reject':
        return this.finish(run, 403);
      case 'play': {
        const leg = await this.answered(run);
        if (!leg) return { answer: null, status: run.call.ended ? 0 : 488, recording: null };
        await this.play(run, leg, action.params.announcement);
        return this.finish(run, 200);
      }
      case 'record':
        return this.voicemail(run, action.params.announcement);
      case 'parallel':
      case 'linear':
      case 'cyclic': {
        const targets: BridgeTarget[] = [];
        const list =
          action.name === 'parallel'
            ? action.params.targets.map((target) => ({ target }))
            : orderTargets(action.params.targets, action.name);
        for (const { target, timeout } of list as { target: string; timeout?: number }[]) {
          const uri = await this.targetUri(target);
          if (uri) targets.push({ uri, timeout });
        }
        if (targets.length === 0) return this.finish(run, 480);
        return this.connect(
          run,
          action.name === 'parallel' ? [targets] : targets.map((target) => [target]),
          action.params.timeout ?? DEFAULT_RING_SECONDS,
        );
      }
      case 'pin':
        return this.runPin(run, dialplan, profile, top);
    }
  }

  /**
   * The items of a pin's action array that run for this call, in order: a `play` plays and the
   * next item follows; any other action takes the call over. After a last `play`, Zentrale hangs up.
   */
  private async runItems(
    run: NumberCall,
    dialplan: CompiledDialplan,
    items: CompiledProfile[],
    top: number,
  ): Promise<Outcome | undefined> {
    for (const item of items) {
      if (selectActions(dialplan, [item], run.situation).length === 0) continue;
      if (run.call.ended) return this.finish(run, 0);
      if (item.action.name !== 'play') return this.runProfile(run, dialplan, item, top);
      const leg = await this.answered(run);
      if (!leg) return { answer: null, status: run.call.ended ? 0 : 488, recording: null };
      await this.play(run, leg, item.action.params.announcement);
    }
    return undefined;
  }

  /** Dialplan v2 `pin` (stepPin): onStart, the digits compared to the code, then onSuccess/onFail/onTimeout. */
  private async runPin(
    run: NumberCall,
    dialplan: CompiledDialplan,
    profile: CompiledProfile,
    top: number,
  ): Promise<Outcome> {
    const pin = compiledPin(profile);
    const leg = await this.answered(run);
    if (!pin || !leg) return { answer: null, status: run.call.ended ? 0 : 488, recording: null };
    const input = new DtmfInput(leg);
    const started = await this.runItems(run, dialplan, profile.pin?.onStart ?? [], top);
    if (started) return started;
    let entered = '';
    for (;;) {
      const timeout = (pin.timeout ?? 0) > 0 ? pin.timeout : undefined;
      const event = await input.next(timeout);
      if (event === 'ended') return this.finish(run, 0);
      const step = stepPin(pin, entered, event === 'timeout' ? { timeout: true } : { digit: event });
      if (step.state === 'pending') {
        entered = step.entered;
        continue;
      }
      input.close();
      if ('nextProfile' in step.next) return this.runDialplan(run, dialplan, top + 1);
      return (await this.runItems(run, dialplan, step.next.actions, top)) ?? this.finish(run, 200);
    }
  }

  /** The number's IVR (walkIvr decides): announcement, keys, other and timeout, nested IVRs, redirects. */
  private async runIvr(run: NumberCall, start: string): Promise<Outcome> {
    const ivrs = await this.directory.ivrs(run.owner);
    const leg = await this.answered(run);
    if (!leg) return { answer: null, status: run.call.ended ? 0 : 488, recording: null };
    const input = new DtmfInput(leg);
    const events: IvrEvent[] = [];
    while (events.length < MAX_IVR_EVENTS) {
      const { outcome, trace } = walkIvr(ivrs, start, events);
      if (outcome.kind === 'missing-ivr') break;
      if (outcome.kind === 'play') {
        input.close();
        await this.play(run, leg, outcome.announcement);
        break;
      }
      if (outcome.kind === 'redirect') {
        input.close();
        return this.redirect(run, outcome.phone);
      }
      const ivr = ivrs.get(outcome.ivr)!;
      const step = trace[trace.length - 1]?.step;
      if ((step === 'announcement' || step === 'repeat') && !input.pending)
        await this.play(run, leg, ivr.announcement);
      const event = await input.next(ivr.timeout?.seconds);
      if (event === 'ended') break;
      events.push(event);
    }
    input.close();
    return this.finish(run, 200);
  }

  /** An IVR's redirect: a platform number answers as it would be called, any other number rings through the carrier. */
  private async redirect(run: NumberCall, phone: string): Promise<Outcome> {
    const answer = await this.directory.numberAnswer(phone);
    if (answer && answer.kind !== 'disabled' && answer.owner && run.depth < MAX_REDIRECTS)
      return this.answerNumber({ ...run, owner: answer.owner, number: phone, depth: run.depth + 1 }, answer);
    const uri = await this.targetUri(phone);
    if (!uri) return this.finish(run, 480);
    return this.connect(run, [[{ uri }]], DEFAULT_RING_SECONDS);
  }

  /**
   * The owner's legacy dialplan (decideLegacyDialplan): the call situation rings its targets for
   * the ring timeout; no answer leads to the timeout (ring timeout passed), busy (486) or
   * unavailable (any other failure) action.
   */
  private async runLegacy(run: NumberCall): Promise<Outcome> {
    const dialplan = await this.directory.legacyDialplan(run.owner);
    let decision = decideLegacyDialplan(dialplan, 'call');
    if (decision.situation === 'call' && decision.targets.length > 0) {
      const targets = await this.legacyTargets(decision.targets);
      const started = Date.now();
      const ringFor = decision.ringTimeout ?? MAX_RING_SECONDS;
      const outcome =
        targets.length > 0
          ? await this.ring(run, [targets], ringFor, true)
          : { status: 480, answered: null, ended: Promise.resolve() };
      if (outcome.status === 200) {
        await outcome.ended;
        return { answer: outcome.answered, status: 200, recording: null };
      }
      if (outcome.status === 0 || run.call.ended) return { answer: null, status: 0, recording: null };
      const timedOut =
        decision.ringTimeout !== undefined && Date.now() - started >= decision.ringTimeout * 1000 - 500;
      decision = decideLegacyDialplan(
        dialplan,
        outcome.status === 486 ? 'busy' : timedOut ? 'timeout' : 'unavailable',
      );
    }
    switch (decision.action) {
      case 'reject':
        return this.finish(run, decision.situation === 'call' ? 403 : 480);
      case 'none':
        return this.finish(run, decision.situation === 'busy' ? 486 : 480);
      case 'record':
        return this.voicemail(run, dialplan.announcement);
      case 'redirect':
      case 'sip': {
        const targets = await this.legacyTargets(decision.targets);
        if (targets.length === 0) return this.finish(run, 480);
        return this.connect(run, [targets], MAX_RING_SECONDS);
      }
    }
  }

  /** A legacy dialplan's targets as URIs (call-reverse is not rung by the engine). */
  private async legacyTargets(targets: readonly LegacyTarget[]): Promise<BridgeTarget[]> {
    const uris: BridgeTarget[] = [];
    for (const target of targets) {
      const uri =
        'sip' in target
          ? await this.targetUri(target.sip)
          : 'phone' in target
            ? await this.targetUri(target.phone)
            : undefined;
      if (uri) uris.push({ uri });
    }
    return uris;
  }

  /** A dialplan target: a SIP account by name, else a number through the carrier. */
  private async targetUri(target: string): Promise<string | undefined> {
    const dialled = parseDialled(target);
    if (dialled.kind === 'sip') {
      const account = await this.directory.sipAccount(dialled.username);
      return account && `sip:${account.username}@${account.domain}`;
    }
    if (dialled.kind === 'number' && this.options.carrierUri)
      return carrierTarget(this.options.carrierUri, dialled.number);
    return undefined;
  }
}

/** `sip:gw@carrier:5070` and +4930... -> `sip:+4930...@carrier:5070`. */
export function carrierTarget(carrierUri: string, number: string): string {
  const rest = carrierUri.replace(/^sips?:/i, '');
  const at = rest.indexOf('@');
  return `sip:${number}@${at < 0 ? rest : rest.slice(at + 1)}`;
}
