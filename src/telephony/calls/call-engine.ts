/**
 * The call model (STYLE.md: src/telephony/calls/): Zentrale's SIP user agent on SIP_APP_PORT
 * behind Kamailio takes every call a phone or the carrier places and runs it step by step: a
 * SIP account calls another by name, a platform number answers with its v2 dialplan (reject, play,
 * record, parallel/linear/cyclic ringing, pin), its IVR or its owner's legacy dialplan, other
 * numbers go to CARRIER_URI. The pure decisions (decideDialplan, stepPin, walkIvr,
 * decideLegacyDialplan) say what happens; this file carries it out. What it needs of the
 * API areas it asks through the CallDirectory; it reports finished calls through recordCall.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { newUuid } from '../../platform/ids.js';
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
  type Target,
  walkIvr,
} from '../decisions/index.js';
import {
  type AudioSource,
  MixSource,
  PcmSource,
  pcmFromWav,
  recordingToWav,
  ringTone,
  WorkerMediaEngine,
} from '../media/index.js';
import { MediaLeg } from '../media-leg.js';
import type { NgClient } from '../rtpengine/ng-client.js';
import { remoteOfUri } from '../sip/dialog.js';
import { type IncomingCall, type Remote, SipUserAgent } from '../sip/index.js';
import { parseNameAddr } from '../sip/message.js';
import { type BridgeOutcome, type BridgeTarget, bridge } from './bridge.js';
import { completeShort, parseDialled, uriUser } from './dial.js';
import type {
  CallDirectory,
  FilterService,
  NumberAnswer,
  OutgoingIdentity,
  ReverseHolder,
  RunningLeg,
  SipAccountInfo,
} from './directory.js';
import { DtmfInput } from './dtmf-input.js';
import { connectLegs, relay } from './relay.js';

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

/** How long a callback's legs ring before they are given up. */
const CALLBACK_RING_SECONDS = 60;
/**
 * How long a call-reverse hand-over (another node's process) may go unanswered before the call
 * is this node's own again: the holder answers at once, so only a node gone silent takes this.
 */
const HANDOVER_SECONDS = 8;
/**
 * How long the holder's UA may take to answer the OPTIONS probe before a hand-over: a node that
 * died within its last heartbeats answers nothing, and an INVITE to it would hold the reverse
 * caller for the 32 s of SIP timer B.
 */
const HANDOVER_PROBE_MS = 2000;
/** Request-URI user and header of a call-reverse hand-over between nodes (handOver). */
const HANDOVER_USER = 'callreverse';
const HANDOVER_HEADER = 'X-Zentrale-Reverse';
/** How often this node tells that its running legs are alive; legs silent 4 times as long are closed. */
const HEARTBEAT_MS = 30_000;
/** A node whose legs beat within this long is alive: its calls count (quota, GET .../calls); else they are orphans. */
export const ALIVE_MS = 4 * HEARTBEAT_MS;

/** The rule action `call` (spec "Rules"), as the rule engine hands it over. */
export interface RuleCallAction {
  readonly from: string;
  readonly from_name?: string;
  readonly clip?: string;
  readonly recipients: readonly string[];
  readonly commands: readonly ({ silence: number } | { announcement: string })[];
}

/** What a number call ended with, for its CDR. */
interface Outcome {
  /** Seconds since the epoch when the caller's leg was answered; null: never. */
  readonly answer: number | null;
  /** Final SIP status of the call (200 when answered; 0: the caller gave up). */
  readonly status: number;
  readonly recording: string | null;
}

/** A call to a platform number while it runs. */
interface NumberCall {
  readonly call: IncomingCall;
  /** Whose number answers (changes when an IVR redirects to another platform number). */
  readonly owner: string;
  readonly number: string;
  readonly from: string;
  readonly situation: CallSituation;
  /** play_announcement_only of the number answering. */
  readonly announcementOnly: boolean;
  /** What the caller hears while targets ring (dialplan ringtone, legacy announcement). */
  ringtone?: { readonly announcement: string; readonly mix: boolean };
  /** The v2 dialplan answering (its uuid keys cyclic ringing's round-robin). */
  dialplan?: string;
  /** Zentrale's own leg, once Zentrale answered the call (announcement, IVR, pin). */
  leg?: MediaLeg;
  answered: number | null;
  /** Platform numbers entered through redirects. */
  readonly depth: number;
  /** The caller's CDR (the parent of a call-reverse leg). */
  readonly record?: TrackedLeg;
}

/** A leg being recorded: its CDR is written once when `end` is called. */
interface TrackedLeg {
  readonly id: string;
  /** Resolves once the leg's running row is written (or its write failed). */
  readonly stored: Promise<void>;
  answered(at?: number): void;
  /** Ends the leg at once; its CDR is written after (TrackedLeg `written` of track()). */
  end(recording?: string | null): Promise<void>;
}

/** The From, display and headers of a call leaving the platform for a user (OutgoingIdentity). */
interface CallerIdentity {
  readonly from: string;
  readonly fromDisplay?: string;
  readonly headers: [string, string][];
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Compares two secrets in constant time (their SHA-256, so that lengths differing leak nothing). */
function sameSecret(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** 110 (police) and 112 (rescue): emergency calls (spec "Partner API" emergency data). */
function isEmergency(digits: string): digits is '110' | '112' {
  return digits === '110' || digits === '112';
}

/** An action's ring time: unset is the default; below 1 means until the network gives up (spec). */
function ringSeconds(timeout: number | undefined): number {
  if (timeout === undefined) return DEFAULT_RING_SECONDS;
  return timeout >= 1 ? timeout : MAX_RING_SECONDS;
}

/** The caller id a number owner's dialplan matches against: a number, or the account name. */
function callerId(account: SipAccountInfo | undefined, call: IncomingCall): string | null {
  if (account) return account.clir ? null : (account.callerId ?? account.username);
  const user = uriUser(parseNameAddr(call.from)?.uri ?? '');
  return user === '' || /^anonymous$/i.test(user) ? null : user;
}

export class CallEngine {
  /** Admissions whose release failed (deleted at the next heartbeat). */
  private readonly unreleased = new Set<string>();
  /** This engine instance in the running-legs table: host, Kamailio's address and port. */
  readonly node: string;
  private readonly heartbeatTimer: NodeJS.Timeout;
  /** Call-reverse processes waiting for the filter number's call, by owner, with their join token. */
  private readonly reversing = new Map<
    string,
    { readonly token: string; readonly take: (call: IncomingCall) => boolean }
  >();
  /** Decoded announcements (pcm()). */
  private readonly decoded = new WeakMap<Uint8Array, Int16Array>();

  private constructor(
    private readonly ua: SipUserAgent,
    private readonly media: WorkerMediaEngine,
    private readonly directory: CallDirectory,
    private readonly options: CallEngineOptions,
  ) {
    this.node = `${os.hostname()}/${options.proxy.address}:${options.proxy.port}`;
    ua.onInvite((call) => {
      this.handle(call).catch((error: unknown) => {
        options.log.error({ err: error, callId: call.callId }, 'call failed');
        call.reject(500);
      });
    });
    this.heartbeatTimer = setInterval(() => {
      const now = Date.now();
      const unreleased = [...this.unreleased];
      this.unreleased.clear();
      void directory
        .releaseCalls(unreleased)
        .catch((error: unknown) => {
          for (const id of unreleased) this.unreleased.add(id);
          throw error;
        })
        .then(() => directory.heartbeat(this.node, now))
        .then(() => directory.closeOrphanLegs(this.node, now - ALIVE_MS, false))
        .catch((error: unknown) => options.log.warn({ err: error }, 'call heartbeat failed'));
    }, HEARTBEAT_MS);
    this.heartbeatTimer.unref();
  }

  static async start(directory: CallDirectory, options: CallEngineOptions): Promise<CallEngine> {
    const ua = await SipUserAgent.start({
      host: options.host,
      port: options.port,
      outboundProxy: options.proxy,
      userAgent: 'Zentrale',
    });
    // RTP runs in a worker thread: packets never wait for (or delay) the API and the SIP UA.
    const media = new WorkerMediaEngine({
      address: options.host,
      portMin: options.mediaPorts?.min,
      portMax: options.mediaPorts?.max,
    });
    const engine = new CallEngine(ua, media, directory, options);
    // Calls this node carried when it stopped without ending them get their CDRs now.
    try {
      const closed = await directory.closeOrphanLegs(engine.node, Date.now() - ALIVE_MS, true);
      if (closed > 0) options.log.info({ closed }, 'calls left running by the last start were closed');
    } catch (error) {
      options.log.error({ err: error }, 'closing calls left running failed');
    }
    return engine;
  }

  /** The port this engine's SIP user agent listens on (UDP and TCP). */
  get port(): number {
    return this.ua.port;
  }

  /** This engine's SIP user agent as another node reaches it (SIP_HOST and the UA's port). */
  get address(): string {
    return `${this.options.host}:${this.ua.port}`;
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
    clearInterval(this.heartbeatTimer);
    await this.ua.close();
    await this.media.close();
    // The legs the close ended, and any change still waiting for its batch, reach the database.
    await this.directory.settle();
  }

  // ---- CDRs

  /**
   * Starts recording a leg (spec "Call detail record"): the running row is written without
   * delaying the call; `end` writes the CDR after the parent's.
   */
  private track(
    leg: Omit<RunningLeg, 'id' | 'node' | 'date'> & { date?: number },
    parent?: TrackedLeg & { written?: Promise<void> },
  ): TrackedLeg & { written: Promise<void> } {
    const { directory, options } = this;
    const id = newUuid();
    const date = leg.date ?? Date.now();
    const warn = (error: unknown) => options.log.error({ err: error, leg: id }, 'CDR write failed');
    const stored = directory
      .legStarted({ ...leg, id, node: this.node, date, parent: parent?.id ?? leg.parent })
      .catch(warn);
    let chain = stored;
    let answered: number | null = null;
    let ended = false;
    let done!: () => void;
    const written = new Promise<void>((resolve) => {
      done = resolve;
    });
    return {
      id,
      stored,
      written,
      answered(at = Date.now()) {
        if (answered !== null || ended) return;
        answered = at;
        // Written for a restart to find (closeOrphanLegs); a leg that ends before the write's
        // turn comes (answered, then ended at once) has its answer in the CDR: no write.
        chain = chain.then(() => (ended ? undefined : directory.legAnswered(id, at))).catch(warn);
      },
      end(recording = null) {
        if (ended) return Promise.resolve();
        ended = true;
        const end = Date.now();
        // The leg is over now (its concurrent-call slot is free at once); its CDR follows in the
        // background, after its parent's, in the directory's next batch of leg writes.
        void (async () => {
          await chain;
          if (parent?.written) await parent.written;
          await directory.legEnded(id, { answered, end, recording }).catch(warn);
          done();
        })();
        return Promise.resolve();
      },
    };
  }

  // ---- concurrency

  /**
   * Takes one of the user's concurrent calls; undefined beyond the feature packs' bound or the
   * user's usergroup limit. The admission is one atomic statement over every node sharing the
   * database (CallDirectory.admitCall); releasing it deletes it (retried at the next heartbeat
   * when that fails). `always` (emergency calls): counted, never refused.
   */
  private async acquire(user: string, always = false): Promise<(() => void) | undefined> {
    const [limit, group] = always
      ? [null, undefined]
      : await Promise.all([this.directory.callLimit(user), this.directory.groupCallLimit(user)]);
    const id = newUuid();
    const now = Date.now();
    const admission = this.directory.admitCall({
      id,
      node: this.node,
      owner: user,
      limit,
      group: group ?? null,
      aliveSince: now - ALIVE_MS,
      now,
    });
    if (always) {
      // An emergency call goes out even when its admission cannot be written (it only counts).
      const written = await admission.catch((error: unknown) => {
        this.options.log.error({ err: error, user }, 'emergency call not counted');
        return false;
      });
      if (!written) return () => {};
    } else if (!(await admission)) return undefined;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.directory.releaseCalls([id]).catch((error: unknown) => {
        this.unreleased.add(id);
        this.options.log.warn({ err: error, user }, 'call admission not released; retried later');
      });
    };
  }

  /** Runs `body` as one of the user's calls; beyond the user's bound the call gets 486. */
  private async counted(user: string, call: IncomingCall, body: () => Promise<void>): Promise<void> {
    const release = await this.acquire(user);
    if (!release) {
      call.reject(486, 'Call Limit Reached');
      return;
    }
    try {
      await body();
    } finally {
      release();
    }
  }

  // ---- calls leaving the platform

  /** From and headers for a call leaving the platform as `callerNumber` (clir: withheld). */
  private identity(
    callerNumber: string | undefined,
    clir: boolean,
    asserted: string | undefined,
  ): CallerIdentity {
    const domain = this.options.host;
    const headers: [string, string][] = [];
    if (asserted) headers.push(['P-Asserted-Identity', `<sip:${asserted}@${domain}>`]);
    if (clir) {
      headers.push(['Privacy', 'id']);
      return { from: 'sip:anonymous@anonymous.invalid', fromDisplay: 'Anonymous', headers };
    }
    return { from: `sip:${callerNumber ?? 'anonymous'}@${domain}`, headers };
  }

  /**
   * Where a number outside the platform is reached for `user`, after the partner's call filter
   * (`service`): the carrier URI, `denied` (403), or undefined without CARRIER_URI.
   */
  private async outside(
    user: string,
    number: string,
    service: FilterService,
  ): Promise<{ uri: string; number: string } | 'denied' | undefined> {
    const verdict = await this.directory.callFilter(user, number, service);
    if (!verdict.allowed) return 'denied';
    const dialled = parseDialled(verdict.destination);
    if (dialled.kind === 'sip') {
      const account = await this.directory.sipAccount(dialled.username);
      return account && { uri: `sip:${account.username}@${account.domain}`, number: account.username };
    }
    if (dialled.kind !== 'number' || !this.options.carrierUri) return undefined;
    return { uri: carrierTarget(this.options.carrierUri, dialled.number), number: dialled.number };
  }

  /** A phone a user's call feature names (callthrough, callback): E.164, or short with dial_prefix. */
  private featureNumber(phone: string, identity: OutgoingIdentity): string | undefined {
    const dialled = parseDialled(phone);
    if (dialled.kind === 'number') return dialled.number;
    if (dialled.kind === 'short') return completeShort(dialled.digits, identity.dialPrefix);
    return undefined;
  }

  // ---- incoming INVITEs

  private async handle(call: IncomingCall): Promise<void> {
    const { proxy } = this.options;
    // Only Kamailio speaks to this port: it authenticated the phone or marked the carrier. The
    // one exception: another node handing over a call-reverse call, with the process's token.
    if (call.remote.address !== proxy.address || call.remote.port !== proxy.port) {
      const token = call.request.headers.get(HANDOVER_HEADER.toLowerCase());
      if (token !== undefined && uriUser(call.request.uri) === HANDOVER_USER) this.handedOver(call, token);
      else call.reject(403);
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
    const from = callerId(account, call) ?? 'anonymous';

    if (dialled.kind === 'invalid') {
      call.reject(404);
      return;
    }
    if (account && dialled.kind === 'short' && isEmergency(dialled.digits))
      return this.emergency(call, account, dialled.digits);
    if (account && (dialled.kind === 'sip' || dialled.kind === 'callthrough'))
      return this.fromAccount(call, account, dialled);
    let number = dialled.kind === 'number' ? dialled.number : undefined;
    if (account && dialled.kind === 'short') {
      // dial_prefix completes a short number (spec POST /api/dialplan).
      const { dialPrefix } = await this.directory.outgoingIdentity(account.owner);
      number = completeShort(dialled.digits, dialPrefix);
    }
    if (number === undefined) {
      call.reject(404);
      return;
    }

    const answer = await this.directory.numberAnswer(number);
    if (!answer) {
      // Not a platform number: the carrier, for SIP accounts only.
      if (!account) {
        call.reject(403);
        return;
      }
      return this.toCarrier(call, account, number);
    }
    if (account && !(await this.directory.callFilter(account.owner, number, 'sip')).allowed) {
      // The caller's partner filter covers calls to platform numbers too.
      call.reject(403);
      return;
    }
    if (answer.kind === 'disabled' || !answer.owner) {
      call.reject(480);
      return;
    }
    const owner = answer.owner;
    const caller = callerId(account, call);
    if (fromCarrier && caller) {
      // A call from outside may be the one a call feature waits for (spec "Call-through", callreverse).
      if (await this.reverseCall(call, owner, caller)) return;
      const phone = await this.directory.takeCallThrough(owner, caller);
      if (phone) return this.callThrough(call, owner, caller, phone, number);
    }
    await this.counted(owner, call, async () => {
      const leg = this.track({ owner, service: 'call', direction: 'in', number: from, phone: number });
      const run: NumberCall = {
        call,
        owner,
        number,
        from,
        situation: { caller, instant: Date.now() },
        announcementOnly: answer.announcementOnly === true,
        answered: null,
        depth: 0,
        record: leg,
      };
      const result = await this.answerNumber(run, answer);
      if (result.answer !== null) leg.answered(result.answer * 1000);
      await leg.end(result.recording);
    });
  }

  /** A SIP account dialled another account by name, a short number or a feature code. */
  private async fromAccount(
    call: IncomingCall,
    account: SipAccountInfo,
    dialled: { kind: 'sip'; username: string } | { kind: 'callthrough' },
  ): Promise<void> {
    if (dialled.kind === 'callthrough') {
      const phone = await this.directory.takeCallThrough(account.owner);
      if (!phone) {
        call.reject(404, 'No Call-Through Pending');
        return;
      }
      return this.callThrough(call, account.owner, account.username, phone, undefined);
    }
    const verdict = await this.directory.callFilter(account.owner, dialled.username, 'sip');
    if (!verdict.allowed) {
      call.reject(403);
      return;
    }
    const callee = await this.directory.sipAccount(dialled.username);
    if (!callee) {
      call.reject(404);
      return;
    }
    await this.counted(account.owner, call, async () => {
      const out = this.track({
        owner: account.owner,
        service: 'call',
        direction: 'out',
        number: callee.username,
        phone: account.callerId,
      });
      const incoming = this.track(
        { owner: callee.owner, service: 'call', direction: 'in', number: account.username },
        out,
      );
      const outcome = await bridge(this.ua, this.options.rtpengine, call, {
        groups: [[{ uri: `sip:${callee.username}@${callee.domain}` }]],
        timeout: 180,
        from: `sip:${account.username}@${account.domain}`,
        fromDisplay: account.username,
      });
      if (outcome.answered !== null) {
        out.answered();
        incoming.answered();
      }
      await outcome.ended;
      await out.end();
      await incoming.end();
    });
  }

  /** A SIP account's call to a number outside: dial_prefix done, clip/clir/PAI, call filter, quota. */
  private async toCarrier(call: IncomingCall, account: SipAccountInfo, number: string): Promise<void> {
    const identity = await this.directory.outgoingIdentity(account.owner);
    const target = await this.outside(account.owner, number, 'sip');
    if (target === 'denied' || !target) {
      call.reject(403);
      return;
    }
    await this.counted(account.owner, call, async () => {
      const leg = this.track({
        owner: account.owner,
        service: 'call',
        direction: 'out',
        number: target.number,
        phone: identity.callerId,
      });
      const caller = this.identity(identity.callerId, identity.clir, identity.assertedIdentity);
      const outcome = await bridge(this.ua, this.options.rtpengine, call, {
        groups: [[{ uri: target.uri }]],
        timeout: 180,
        ...caller,
      });
      if (outcome.answered !== null) leg.answered();
      await outcome.ended;
      await leg.end();
    });
  }

  /**
   * An emergency call (110 police, 112 rescue) from a SIP account (spec "Partner API" emergency
   * data): to the carrier, addressed to the control centre the user's partner set
   * (emergency_police, emergency_rescue; else the dialled 110/112 itself, for the carrier to
   * route), with uui_header as `User-to-User: <hex>;encoding=hex` (RFC 7433). Never held back:
   * no call filter, no dial_prefix, no concurrent-call quota (it counts, but is never refused),
   * and no CLIR: the control centre sees the caller id and the P-Asserted-Identity.
   */
  private async emergency(call: IncomingCall, account: SipAccountInfo, digits: '110' | '112'): Promise<void> {
    const { carrierUri } = this.options;
    if (!carrierUri) {
      call.reject(403);
      return;
    }
    const data = await this.directory.emergencyData(account.owner);
    const centre = (digits === '110' ? data?.police : data?.rescue) ?? digits;
    const identity = await this.directory.outgoingIdentity(account.owner);
    const caller = this.identity(identity.callerId, false, identity.assertedIdentity);
    const headers = [...caller.headers];
    if (data?.uuiHeader)
      headers.push(['User-to-User', `${Buffer.from(data.uuiHeader, 'utf8').toString('hex')};encoding=hex`]);
    const release = await this.acquire(account.owner, true);
    try {
      const leg = this.track({
        owner: account.owner,
        service: 'call',
        direction: 'out',
        number: centre,
        phone: identity.callerId,
      });
      const outcome = await bridge(this.ua, this.options.rtpengine, call, {
        groups: [[{ uri: carrierTarget(carrierUri, encodeURIComponent(centre)) }]],
        timeout: MAX_RING_SECONDS,
        ...caller,
        headers,
      });
      if (outcome.answered !== null) leg.answered();
      await outcome.ended;
      await leg.end();
    } finally {
      release?.();
    }
  }

  /**
   * Call-through (spec "Call-through"): the caller (`*98` from the user's SIP account, or the
   * filter number calling the user's number) is connected to the saved phone.
   */
  private async callThrough(
    call: IncomingCall,
    owner: string,
    caller: string,
    phone: string,
    calledNumber: string | undefined,
  ): Promise<void> {
    const identity = await this.directory.outgoingIdentity(owner);
    const number = this.featureNumber(phone, identity);
    const target = number && (await this.outside(owner, number, 'call_through'));
    if (!target || target === 'denied') {
      call.reject(target === 'denied' ? 403 : 404);
      return;
    }
    await this.counted(owner, call, async () => {
      const incoming = this.track({
        owner,
        service: 'call_through',
        direction: 'in',
        number: caller,
        phone: calledNumber,
      });
      const out = this.track(
        { owner, service: 'call_through', direction: 'out', number: target.number, phone: identity.callerId },
        incoming,
      );
      const outcome = await bridge(this.ua, this.options.rtpengine, call, {
        groups: [[{ uri: target.uri }]],
        timeout: 180,
        ...this.identity(identity.callerId, identity.clir, identity.assertedIdentity),
      });
      if (outcome.answered !== null) {
        incoming.answered();
        out.answered();
      }
      await outcome.ended;
      await incoming.end();
      await out.end();
    });
  }

  /**
   * Callback (POST /api/dialplan/callback): the user's cti_via is called first; once it
   * answered, `to` is called and both are bridged (relayed by Zentrale's endpoints). `from` is
   * the caller number on both legs; clir_enable withholds it on the `to` leg. Two CDRs:
   * the cti_via leg is the parent of the `to` leg. Resolves when the callback ended.
   */
  async callback(user: string): Promise<void> {
    const request = await this.directory.takeCallback(user);
    if (!request) return;
    const identity = await this.directory.outgoingIdentity(user);
    const release = await this.acquire(user);
    if (!release) {
      this.options.log.info({ user }, 'callback refused: concurrent call limit');
      return;
    }
    try {
      const via = await this.outside(user, request.via, 'callback');
      const toNumber = this.featureNumber(request.to, identity);
      const parent = this.track({
        owner: user,
        service: 'call_back',
        direction: 'out',
        number: request.via,
        phone: request.from,
      });
      if (!via || via === 'denied' || !toNumber) {
        await parent.end();
        return;
      }
      const asserted = (await this.directory.outgoingIdentity(user, request.from)).assertedIdentity;
      const viaLeg = await MediaLeg.originate(this.ua, this.media, {
        uri: via.uri,
        ...this.identity(request.from, false, asserted),
      });
      const timer = setTimeout(() => void viaLeg.hangup(), CALLBACK_RING_SECONDS * 1000);
      const result = await viaLeg.result;
      clearTimeout(timer);
      if (result.status < 200 || result.status >= 300 || viaLeg.call.ended) {
        await parent.end();
        return;
      }
      parent.answered();
      const to = await this.outside(user, toNumber, 'callback');
      const child = this.track(
        {
          owner: user,
          service: 'call_back',
          direction: 'out',
          number: to && to !== 'denied' ? to.number : toNumber,
          phone: request.from,
        },
        parent,
      );
      if (!to || to === 'denied') {
        await viaLeg.hangup();
        await parent.end();
        await child.end();
        return;
      }
      const outcome = await relay(this.ua, this.media, viaLeg, {
        groups: [[{ uri: to.uri }]],
        timeout: CALLBACK_RING_SECONDS,
        ...this.identity(request.from, identity.clir, asserted),
      });
      if (outcome.status === 200) {
        child.answered();
        await outcome.ended;
      } else await viaLeg.hangup().catch(() => {});
      // Both end now (the child's CDR is still written after its parent's).
      await Promise.all([parent.end(), child.end()]);
    } finally {
      release();
    }
  }

  /**
   * A rule's call action (spec "Rules", action call): one call to each recipient, placed for the
   * rule's owner as `from` (the recipients see `clip` when given, and `from_name`), that plays the
   * commands once answered (the owner's announcements, silences in milliseconds) and hangs up.
   * Each call is one of the owner's concurrent calls (a recipient beyond the bound is skipped)
   * and passes the partner's call filter as a callback does. Resolves once every call was
   * placed; the calls run on, their CDRs (service call, direction out) tell how they went.
   */
  async ruleCall(owner: string, action: RuleCallAction): Promise<void> {
    const shown = action.clip ?? action.from;
    const asserted = (await this.directory.outgoingIdentity(owner, shown)).assertedIdentity;
    const identity = this.identity(shown, false, asserted);
    for (const recipient of new Set(action.recipients)) {
      const target = await this.outside(owner, recipient, 'callback');
      if (!target || target === 'denied') {
        this.options.log.info({ owner, recipient }, 'rule call not placed: no route or filtered');
        continue;
      }
      const release = await this.acquire(owner);
      if (!release) {
        this.options.log.info({ owner, recipient }, 'rule call not placed: concurrent call limit');
        continue;
      }
      const record = this.track({
        owner,
        service: 'call',
        direction: 'out',
        number: target.number,
        phone: action.from,
      });
      void this.playCommands(owner, target.uri, identity, action, record)
        .catch((error: unknown) => this.options.log.error({ err: error, owner }, 'rule call failed'))
        .finally(release);
    }
  }

  private async playCommands(
    owner: string,
    uri: string,
    identity: CallerIdentity,
    action: RuleCallAction,
    record: TrackedLeg,
  ): Promise<void> {
    const leg = await MediaLeg.originate(this.ua, this.media, {
      uri,
      ...identity,
      ...(action.from_name ? { fromDisplay: action.from_name } : {}),
    });
    try {
      const timer = setTimeout(() => void leg.hangup(), CALLBACK_RING_SECONDS * 1000);
      const result = await leg.result;
      clearTimeout(timer);
      if (result.status < 200 || result.status >= 300 || leg.call.ended) return;
      record.answered();
      for (const command of action.commands) {
        if (leg.call.ended) break;
        if ('announcement' in command) {
          const wav = await this.directory.announcementWav(owner, command.announcement);
          if (wav && !leg.call.ended) await leg.endpoint.playPcm(pcmFromWav(wav));
        } else await leg.endpoint.playPcm(new Int16Array(Math.round(command.silence * 8)));
      }
      if (!leg.call.ended) await leg.hangup();
    } finally {
      await record.end();
    }
  }

  /** Runs what a platform number answers with: its v2 dialplan, its IVR or its owner's legacy dialplan. */
  private answerNumber(run: NumberCall, answer: NumberAnswer): Promise<Outcome> {
    switch (answer.kind) {
      case 'dialplan': {
        const ringtone = answer.dialplan.ringtone;
        if (ringtone?.announcement)
          run.ringtone = { announcement: ringtone.announcement, mix: ringtone.mix === true };
        run.dialplan = answer.uuid;
        return this.runDialplan(run, compileDialplan(answer.dialplan), 0);
      }
      case 'ivr':
        return this.runIvr(run, answer.ivr);
      case 'legacy':
        return this.runLegacy(run);
      case 'disabled':
        return Promise.resolve(this.finish(run, 480));
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

  /**
   * An announcement's samples, decoded once per WAV the directory hands out (it gives the same
   * bytes for the same content version), in shared memory the media worker reads without a copy.
   */
  private pcm(wav: Uint8Array): Int16Array {
    let samples = this.decoded.get(wav);
    if (!samples) {
      const plain = pcmFromWav(wav);
      samples = new Int16Array(new SharedArrayBuffer(plain.byteLength));
      samples.set(plain);
      this.decoded.set(wav, samples);
    }
    return samples;
  }

  /** Plays the owner's announcement on the answered leg (nothing when it has no audio). */
  private async play(run: NumberCall, leg: MediaLeg, announcement: string | undefined): Promise<void> {
    const wav = announcement && (await this.directory.announcementWav(run.owner, announcement));
    if (wav && !run.call.ended) await leg.endpoint.playPcm(this.pcm(wav));
  }

  /** The voicemail path (v2 `record`, legacy `record`): the announcement, then the message. */
  private async voicemail(run: NumberCall, announcement: string | undefined): Promise<Outcome> {
    const leg = await this.answered(run);
    if (!leg) return { answer: null, status: run.call.ended ? 0 : 488, recording: null };
    await this.play(run, leg, announcement);
    // play_announcement_only: no message after the announcement.
    if (run.call.ended || run.announcementOnly) return this.finish(run, 200);
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
    cancel?: AbortSignal,
    clip?: string,
  ): Promise<BridgeOutcome> {
    // The targets see the caller, or the action's clip_number (dialplan v2).
    const shown = clip ?? run.from;
    const options = {
      groups,
      timeout,
      from: `sip:${shown}@${this.options.host}`,
      fromDisplay: shown,
      keepCallerOnFailure: keep,
    };
    if (run.ringtone && !run.call.ended) await this.playRingtone(run, run.ringtone);
    if (!run.leg) return bridge(this.ua, this.options.rtpengine, run.call, options);
    const outcome = await relay(this.ua, this.media, run.leg, { ...options, cancel });
    if (outcome.status !== 200 && !keep) void run.leg.hangup().catch(() => {});
    return outcome;
  }

  /**
   * The dialplan's ringtone (spec: "played during connection"): Zentrale answers the call and
   * plays the announcement in a loop while the targets ring, over the ring tone with `mix`; the
   * relay replaces it once a target answers. Without audio the caller hears the ring tone alone.
   */
  private async playRingtone(
    run: NumberCall,
    ringtone: { announcement: string; mix: boolean },
  ): Promise<void> {
    const wav = await this.directory.announcementWav(run.owner, ringtone.announcement);
    const leg = await this.answered(run);
    if (!leg) return;
    let source: AudioSource = wav ? new PcmSource(this.pcm(wav), true) : ringTone();
    if (wav && ringtone.mix) source = new MixSource(source, ringTone());
    void leg.endpoint.play(source);
  }

  /** Rings and waits for the end of the connected call. */
  private async connect(
    run: NumberCall,
    groups: BridgeTarget[][],
    timeout: number,
    clip?: string,
  ): Promise<Outcome> {
    const outcome = await this.ring(run, groups, timeout, false, undefined, clip);
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
            : orderTargets(
                action.params.targets,
                action.name,
                action.name === 'cyclic'
                  ? // The action: its top profile and its index there (a pin's items are one level down).
                    await this.cyclicStart(run, `${top}/${profile.index}`, action.params.targets.length)
                  : 0,
              );
        for (const { target, timeout, clip_number } of list as Target[]) {
          const uri = await this.targetUri(target, run.owner, 'dialplan');
          if (!uri) continue;
          targets.push({
            uri,
            // Spec: a timeout below 1 means until the network gives up.
            timeout: timeout !== undefined && timeout >= 1 ? timeout : undefined,
            // A linear or cyclic target's own clip_number is the caller id it sees (over the action's).
            ...(clip_number
              ? { from: `sip:${clip_number}@${this.options.host}`, fromDisplay: clip_number }
              : {}),
          });
        }
        if (targets.length === 0) return this.finish(run, 480);
        return this.connect(
          run,
          action.name === 'parallel' ? [targets] : targets.map((target) => [target]),
          ringSeconds(action.params.timeout),
          action.params.clip_number,
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

  /**
   * The start of a cyclic action's round-robin, kept in the database per dialplan and action (all
   * nodes continue one round-robin). A failed update is logged and the call starts at the first
   * target: ringing matters more than the order.
   */
  private async cyclicStart(run: NumberCall, action: string, count: number): Promise<number> {
    // Only a v2 dialplan has cyclic actions, and it always names itself (answerNumber).
    if (run.dialplan === undefined) return 0;
    try {
      return await this.directory.cyclicStart(run.dialplan, action, count);
    } catch (error) {
      this.options.log.warn({ err: error, dialplan: run.dialplan }, 'round-robin position not kept');
      return 0;
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
    const uri = await this.targetUri(phone, run.owner, 'ivr');
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
    if (dialplan.announcement)
      run.ringtone = { announcement: dialplan.announcement, mix: dialplan.mix_ringtone === true };
    if (decision.situation === 'call' && decision.targets.length > 0) {
      const targets = await this.legacyTargets(run, decision.targets);
      const reverse = decision.targets.some((target) => 'callreverse' in target)
        ? await this.startCallReverse(run)
        : undefined;
      const started = Date.now();
      const ringFor = decision.ringTimeout ?? MAX_RING_SECONDS;
      let outcome: BridgeOutcome;
      try {
        if (reverse && !run.ringtone) {
          // The reverse call is joined to the caller's leg: Zentrale answers with the ring tone.
          const leg = await this.answered(run);
          if (leg) void leg.endpoint.play(ringTone());
        }
        const ringing =
          targets.length > 0
            ? this.ring(run, [targets], ringFor, true, reverse?.signal)
            : reverse
              ? this.waitRinging(run, ringFor, reverse.signal)
              : Promise.resolve({ status: 480, answered: null, ended: Promise.resolve() });
        outcome = await ringing;
        const left = ringFor * 1000 - (Date.now() - started);
        if (reverse && !reverse.arrived() && outcome.status !== 200 && outcome.status !== 0 && left > 0) {
          // The other targets failed: the caller keeps waiting for the reverse call until the ring timeout.
          const waited = await this.waitRinging(run, left / 1000, reverse.signal);
          if (waited.status === 0) outcome = waited;
        }
        const joined = reverse?.arrived();
        if (joined) {
          if (run.leg && !run.call.ended && outcome.status !== 200)
            return await this.joinReverse(run, run.leg, joined);
          joined.reject(486);
        }
      } finally {
        await reverse?.stop();
      }
      if (outcome.status === 200) {
        await outcome.ended;
        return { answer: run.leg ? run.answered : outcome.answered, status: 200, recording: null };
      }
      if (outcome.status === 0 || run.call.ended) return { answer: run.answered, status: 0, recording: null };
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
        const targets = await this.legacyTargets(run, decision.targets);
        if (targets.length === 0) return this.finish(run, 480);
        return this.connect(run, [targets], MAX_RING_SECONDS);
      }
    }
  }

  /** A legacy dialplan's targets as URIs (call-reverse is a process, not a URI: startCallReverse). */
  private async legacyTargets(run: NumberCall, targets: readonly LegacyTarget[]): Promise<BridgeTarget[]> {
    const uris: BridgeTarget[] = [];
    for (const target of targets) {
      const uri =
        'sip' in target
          ? await this.targetUri(target.sip, run.owner, 'dialplan')
          : 'phone' in target
            ? await this.targetUri(target.phone, run.owner, 'dialplan')
            : undefined;
      if (uri) uris.push({ uri });
    }
    return uris;
  }

  /** Waits like an unanswered ring: until `cancel`, the caller gives up or `seconds` pass (480). */
  private waitRinging(run: NumberCall, seconds: number, cancel: AbortSignal): Promise<BridgeOutcome> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve({ status: run.call.ended ? 0 : 480, answered: null, ended: Promise.resolve() });
      };
      const timer = setTimeout(done, seconds * 1000);
      cancel.addEventListener('abort', done);
      run.call.onEnd(done);
    });
  }

  /**
   * Call-reverse (spec POST /api/dialplan/callreverse; legacy callreverse_enable): the owner
   * hears of the call (dialplan_callreverse_start), sets the number it will call from, and that
   * number's call to one of the owner's numbers is joined to the waiting caller. `signal` aborts
   * the other targets' ringing once it arrived; `stop` ends the process (dialplan_callreverse_stop).
   */
  private async startCallReverse(run: NumberCall) {
    const controller = new AbortController();
    let taken: IncomingCall | undefined;
    const take = (call: IncomingCall) => {
      if (taken || controller.signal.aborted || run.call.ended) return false;
      taken = call;
      controller.abort();
      return true;
    };
    // The capability another node presents to hand the reverse call over (handOver).
    const process = { token: randomBytes(24).toString('base64url'), take };
    this.reversing.set(run.owner, process);
    // Another node judges the holder alive by the caller's running row (legAlive): the process
    // is announced once that row is written (leg writes wait for their batch, up to 50 ms).
    await run.record?.stored;
    await this.directory.callReverseStarted(run.owner, run.from, run.number, {
      leg: run.record?.id ?? null,
      address: this.address,
      token: process.token,
    });
    return {
      signal: controller.signal,
      arrived: () => taken,
      stop: async () => {
        if (this.reversing.get(run.owner) === process) this.reversing.delete(run.owner);
        if (!controller.signal.aborted) controller.abort();
        await this.directory
          .callReverseStopped(run.owner, run.from, run.number, run.record?.id ?? null)
          .catch((error: unknown) => this.options.log.warn({ err: error }, 'callreverse stop failed'));
      },
    };
  }

  /**
   * A call from outside to one of the owner's numbers: when its caller is the filter of the
   * owner's call-reverse process, it is joined to the waiting caller, here or (the process runs
   * on another node, alive) handed over to that node. False: an ordinary call to the number.
   */
  private async reverseCall(call: IncomingCall, owner: string, caller: string): Promise<boolean> {
    const process = await this.directory.callReverse(owner);
    if (process?.filter !== caller) return false;
    const local = this.reversing.get(owner);
    const holder = process.holder;
    if (local && (!holder || sameSecret(local.token, holder.token))) return local.take(call);
    if (!holder?.leg || !(await this.directory.legAlive(holder.leg, Date.now() - ALIVE_MS)))
      return local?.take(call) ?? false;
    return this.handOver(call, owner, caller, holder);
  }

  /**
   * Hands a reverse call over to the node holding the process (a B2BUA leg straight to its UA,
   * media relayed by this node's rtpengine as every bridged call is). Its CDRs are the holder's;
   * this node writes none for the hand-over. False when the holder did not take it (gone,
   * token refused, the caller gave up meanwhile): the call is then this node's ordinary call.
   */
  private async handOver(
    call: IncomingCall,
    owner: string,
    caller: string,
    holder: ReverseHolder,
  ): Promise<boolean> {
    const uri = `sip:${HANDOVER_USER}@${holder.address}`;
    const target = remoteOfUri(uri);
    if (!target || !(await this.reachable(uri, target))) {
      this.options.log.info({ owner, holder: holder.address }, 'callreverse holder unreachable');
      return false;
    }
    const outcome = await bridge(this.ua, this.options.rtpengine, call, {
      groups: [[{ uri, target }]],
      timeout: HANDOVER_SECONDS,
      from: `sip:${caller}@${this.options.host}`,
      fromDisplay: caller,
      headers: [[HANDOVER_HEADER, `${owner} ${holder.token}`]],
      keepCallerOnFailure: true,
    });
    if (outcome.status === 200) {
      await outcome.ended;
      return true;
    }
    if (call.ended) return true;
    this.options.log.info(
      { owner, holder: holder.address, status: outcome.status },
      'callreverse not handed over',
    );
    return false;
  }

  /** The SIP user agent at `target` answers an OPTIONS within HANDOVER_PROBE_MS (any status). */
  private reachable(uri: string, target: Remote): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), HANDOVER_PROBE_MS);
      this.ua.request({ method: 'OPTIONS', uri, target }).then(
        (response) => {
          clearTimeout(timer);
          resolve(response.status !== 408);
        },
        () => {
          clearTimeout(timer);
          resolve(false);
        },
      );
    });
  }

  /**
   * Another node hands over a reverse call (handOver): `X-Zentrale-Reverse: <owner> <token>`.
   * Joined like the reverse call arriving here when the token is the owner's waiting process's;
   * 403 otherwise (nothing joined), 480 when the process no longer takes it.
   */
  private handedOver(call: IncomingCall, header: string): void {
    const [owner = '', token = ''] = header.trim().split(/\s+/);
    const waiting = this.reversing.get(owner);
    if (!waiting || !sameSecret(waiting.token, token)) {
      call.reject(403);
      return;
    }
    if (!waiting.take(call)) call.reject(480);
  }

  /** The reverse call is answered and joined to the waiting caller; its CDR is a call_reverse child of the caller's. */
  private async joinReverse(run: NumberCall, callerLeg: MediaLeg, call: IncomingCall): Promise<Outcome> {
    const caller = callerId(undefined, call) ?? 'anonymous';
    const record = this.track(
      { owner: run.owner, service: 'call_reverse', direction: 'in', number: caller, phone: run.number },
      run.record,
    );
    const leg = await MediaLeg.accept(call, this.media);
    try {
      if (leg) await leg.answer();
    } catch {
      // The reverse caller gave up meanwhile.
    }
    if (!leg || call.ended) {
      void record.end();
      return this.finish(run, 480);
    }
    record.answered();
    await connectLegs(callerLeg, leg);
    // Written after the caller's record, its parent, which ends once this returns.
    void record.end();
    return { answer: run.answered, status: 200, recording: null };
  }

  /**
   * A dialplan target: a SIP account by name, else a number through the carrier (after the
   * owner's call filter for `service`).
   */
  private async targetUri(
    target: string,
    owner: string,
    service: FilterService,
  ): Promise<string | undefined> {
    const dialled = parseDialled(target);
    if (dialled.kind === 'sip') {
      const account = await this.directory.sipAccount(dialled.username);
      return account && `sip:${account.username}@${account.domain}`;
    }
    if (dialled.kind !== 'number') return undefined;
    const outside = await this.outside(owner, dialled.number, service);
    return outside && outside !== 'denied' ? outside.uri : undefined;
  }
}

/** `sip:gw@carrier:5070` and +4930... -> `sip:+4930...@carrier:5070`. */
export function carrierTarget(carrierUri: string, number: string): string {
  const rest = carrierUri.replace(/^sips?:/i, '');
  const at = rest.indexOf('@');
  return `sip:${number}@${at < 0 ? rest : rest.slice(at + 1)}`;
}
